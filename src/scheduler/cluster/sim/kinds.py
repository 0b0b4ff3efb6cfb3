"""Lookups over the resources the in-memory cluster serves (see `resource_kinds`)."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from scheduler.cluster.resource_kinds import BUILTIN_KINDS
from scheduler.cluster.resource_kinds import ResourceKind
from scheduler.framework.errors import NotFoundError


class KindRegistry:
    """Looks kinds up by resource name (API calls) and by apiVersion+kind (loaded manifests)."""

    def __init__(self, kinds: Iterable[ResourceKind] = BUILTIN_KINDS) -> None:
        self._by_resource: dict[str, ResourceKind] = {}
        self._by_group_kind: dict[tuple[str, str], ResourceKind] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: ResourceKind) -> None:
        self._by_resource[kind.resource] = kind
        self._by_group_kind[(kind.group, kind.kind)] = kind

    def for_resource(self, resource: str) -> ResourceKind:
        kind = self._by_resource.get(resource)
        if kind is None:
            raise NotFoundError(f"the server could not find the requested resource ({resource})")
        return kind

    def for_object(self, obj: Mapping[str, Any]) -> ResourceKind:
        """The kind of a manifest. Any version of a known group matches (a manifest written for
        policy/v1beta1 still loads as a PodDisruptionBudget)."""
        api_version = str(obj.get("apiVersion") or "")
        kind_name = str(obj.get("kind") or "")
        group = api_version.rpartition("/")[0]
        kind = self._by_group_kind.get((group, kind_name))
        if kind is None:
            meta = obj.get("metadata") or {}
            where = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
            raise ValueError(
                f"cannot load {kind_name or '<no kind>'} {where or '<unnamed>'}"
                f" (apiVersion {api_version or '<none>'}): unknown kind; known kinds are "
                + ", ".join(
                    sorted({f"{k.api_version} {k.kind}" for k in self._by_resource.values()})
                )
            )
        return kind
