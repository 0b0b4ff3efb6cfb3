"""A cluster client that can only read: shadow mode's guarantee that it changes nothing.

Shadow mode never reaches a write on purpose; this makes an accidental one (a plugin's
background task, a code path overlooked) fail loudly instead of touching production pods.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from scheduler.cluster.port import ClusterClient, ObjectList, WatchEvent
from scheduler.framework.errors import SchedulerError
from scheduler.objects.pod import Pod


class ShadowWriteRefusedError(SchedulerError):
    """Something in shadow mode tried to write to the cluster."""


class ReadOnlyClusterClient:
    def __init__(self, inner: ClusterClient) -> None:
        self._inner = inner
        self.refused: list[str] = []

    async def list(
        self,
        resource: str,
        *,
        namespace: str | None = None,
        field_selector: str | None = None,
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

    async def close(self) -> None:
        await self._inner.close()

    def _refuse(self, what: str) -> ShadowWriteRefusedError:
        self.refused.append(what)
        return ShadowWriteRefusedError(f"shadow mode writes nothing to the cluster: refused {what}")

    async def bind(self, pod: Pod, node_name: str) -> None:
        raise self._refuse(f"binding {pod.key} to {node_name}")

    async def delete_pod(self, namespace: str, name: str, uid: str = "") -> None:
        raise self._refuse(f"deleting pod {namespace}/{name}")

    async def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        raise self._refuse(f"patching the status of pod {namespace}/{name}")

    async def patch_object(
        self,
        resource: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        subresource: str = "",
    ) -> None:
        raise self._refuse(f"patching {resource} {namespace}/{name}")

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        raise self._refuse(f"creating a {resource} object")

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        raise self._refuse(f"updating a {resource} object")

    async def delete(self, resource: str, namespace: str, name: str) -> None:
        raise self._refuse(f"deleting {resource} {namespace}/{name}")

    async def create_event(self, event: Mapping[str, Any]) -> None:
        raise self._refuse("creating an Event")
