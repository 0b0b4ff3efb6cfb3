"""The cluster port: everything the scheduler asks of an API server, as one Protocol.

Two adapters implement it: `scheduler.cluster.kube` (a real API server) and
`scheduler.cluster.sim` (the in-memory cluster behind `kube-pyscheduler simulate`).

Objects travel as plain dicts shaped like the API's JSON. Resources are named by their plural,
lowercase name ("pods", "nodes", "leases", "podgroups", ...); cluster-scoped resources use the
namespace "". Failures raise the `scheduler.framework.errors.APIError` family: `NotFoundError`
(404), `ConflictError` (409: already exists, stale resourceVersion, already bound) and
`GoneError` (410: a watch asked for history the server no longer keeps).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Literal
from typing import Protocol
from typing import runtime_checkable

from scheduler.framework.handle import ClusterAPI

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change in a watch stream. A BOOKMARK carries only `metadata.resourceVersion`."""

    type: WatchEventType
    object: dict[str, Any]

    @property
    def resource_version(self) -> str:
        return str((self.object.get("metadata") or {}).get("resourceVersion") or "")


@dataclass(frozen=True, slots=True)
class ObjectList:
    """The answer to a list: the items and the version to start watching from."""

    items: list[dict[str, Any]]
    resource_version: str


@dataclass(frozen=True, slots=True)
class ListPage:
    """One page of a list, as `PagedLister.list_pages` hands them over.

    `restarted` says the pages before it are void: the server could no longer continue the
    list, so it was taken again in one piece, which this page holds whole. `resource_version`
    is the version to watch from once the last page is in; earlier pages may carry ""."""

    items: list[dict[str, Any]]
    resource_version: str
    restarted: bool = False


@runtime_checkable
class PagedLister(Protocol):
    """A client that can hand a list over page by page, while it fetches the next: an
    informer then stores one page while the server prepares the following one."""

    def list_pages(
        self, resource: str, *, field_selector: str | None = None
    ) -> AsyncIterator[ListPage]:
        """The pages of what `list` returns (all namespaces), in order."""
        ...


class ClusterClient(ClusterAPI, Protocol):
    """Reads, watches and writes against one cluster. `get` and the writes plugins make
    (`bind`, `delete_pod`, `patch_pod_status`, `patch_object`) come from `ClusterAPI`.

    Objects yielded by `list` and `watch` may be shared with the client's own cache: treat them
    as read-only. `get`, `create` and `update` return objects the caller owns.

    `patch_pod_status` takes the fields of the pod's `status` to merge (conditions merge by
    `type`, a None value removes a field); a body of the form ``{"status": {...}}`` is
    accepted as well.
    """

    async def list(
        self,
        resource: str,
        *,
        namespace: str | None = None,
        field_selector: str | None = None,
    ) -> ObjectList:
        """Every object of `resource` (in `namespace` if given) matching `field_selector`."""
        ...

    def watch(
        self,
        resource: str,
        *,
        resource_version: str,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent]:
        """Changes after `resource_version`, in order; GoneError if that version is too old.

        With a field selector, an object that starts matching arrives as ADDED and one that
        stops matching as DELETED, as the API server's watch does. The stream may end at any
        time (the server closes it); the caller resumes from the last version it saw.
        """
        ...

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create and return the stored object; ConflictError if the name is taken."""
        ...

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Replace the object. If `metadata.resourceVersion` is set and is not the current one,
        ConflictError (optimistic concurrency); NotFoundError if the object does not exist."""
        ...

    async def delete(self, resource: str, namespace: str, name: str) -> None:
        """Delete the object, or NotFoundError."""
        ...

    async def create_event(self, event: Mapping[str, Any]) -> None:
        """Record an events.k8s.io/v1 Event."""
        ...

    async def close(self) -> None:
        """Release connections; open watch streams end."""
        ...
