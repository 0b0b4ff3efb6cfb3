"""The resources a client can address, by plural name (see scheduler.cluster.resource_kinds)."""

from __future__ import annotations

from collections.abc import Iterable

from scheduler.cluster.resource_kinds import BUILTIN_KINDS
from scheduler.cluster.resource_kinds import ResourceKind
from scheduler.framework.errors import NotFoundError
from scheduler.objects.raw import DEFAULT_NAMESPACE

# The real-cluster client's names for the shared table.
ApiResource = ResourceKind
BUILTIN_RESOURCES = BUILTIN_KINDS

__all__ = ["BUILTIN_RESOURCES", "DEFAULT_NAMESPACE", "ApiResource", "ResourceTable"]


class ResourceTable:
    """The resources a client can address, by plural name; more can be registered (e.g. a
    custom resource a plugin reads)."""

    def __init__(self, resources: Iterable[ApiResource] = BUILTIN_RESOURCES) -> None:
        self._by_name: dict[str, ApiResource] = {}
        for resource in resources:
            self.register(resource)

    def register(self, resource: ApiResource) -> None:
        self._by_name[resource.resource] = resource

    def __getitem__(self, resource: str) -> ApiResource:
        found = self._by_name.get(resource)
        if found is None:
            # What the API server answers for a resource it does not serve.
            raise NotFoundError(f"the server could not find the requested resource ({resource})")
        return found

    def __contains__(self, resource: object) -> bool:
        return resource in self._by_name

    def names(self) -> list[str]:
        return sorted(self._by_name)
