"""A cluster client that reads and refuses to write.

`explain` loads the cluster through the scheduler's own informers and plugins. Any of those
could try to write (an Event, a status patch, a preemption); wrapping the client makes such a
write fail loudly instead of changing the cluster.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from scheduler.cluster.port import ClusterClient, ObjectList, WatchEvent
from scheduler.framework.errors import APIError
from scheduler.objects.pod import Pod

# The status an API server gives a request it is not allowed to serve.
FORBIDDEN = 403


class WriteRefusedError(APIError):
    """A write was attempted through a read-only client."""


class ReadOnlyCluster:
    """Forwards reads to `inner`; every write raises WriteRefusedError and is remembered."""

    def __init__(self, inner: ClusterClient) -> None:
        self._inner = inner
        self.refused: list[str] = []

    def _refuse(self, what: str) -> WriteRefusedError:
        self.refused.append(what)
        return WriteRefusedError(FORBIDDEN, f"explain is read-only: refused to {what}")

    async def list(
        self, resource: str, *, namespace: str | None = None, field_selector: str | None = None
    ) -> ObjectList:
        return await self._inner.list(resource, namespace=namespace, field_selector=field_selector)

    def watch(
        self,
        resource: str,
        *,
        resource_version: str,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent]:
        return self._inner.watch(
            resource,
            resource_version=resource_version,
            field_selector=field_selector,
            allow_bookmarks=allow_bookmarks,
        )

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        return await self._inner.get(resource, namespace, name)

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        raise self._refuse(f"create {resource}")

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        raise self._refuse(f"update {resource}")

    async def delete(self, resource: str, namespace: str, name: str) -> None:
        raise self._refuse(f"delete {resource} {namespace}/{name}")

    async def create_event(self, event: Mapping[str, Any]) -> None:
        raise self._refuse("create an Event")

    async def bind(self, pod: Pod, node_name: str) -> None:
        raise self._refuse(f"bind {pod.key} to {node_name}")

    async def delete_pod(self, namespace: str, name: str, uid: str = "") -> None:
        raise self._refuse(f"delete pod {namespace}/{name}")

    async def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        raise self._refuse(f"patch the status of pod {namespace}/{name}")

    async def patch_object(
        self,
        resource: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        subresource: str = "",
    ) -> None:
        raise self._refuse(f"patch {resource} {namespace}/{name}")

    async def close(self) -> None:
        await self._inner.close()
