"""A cluster client that reads and refuses to write.

`explain` and shadow mode load the cluster through the scheduler's own informers and plugins,
any of which could try to write (an Event, a status patch, a Binding, a preemption). Wrapping
the client makes such a write fail loudly, as an API server refusing it would, instead of
changing the cluster; every refusal is remembered so the caller can report it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from scheduler.cluster.port import ClusterClient
from scheduler.cluster.port import ObjectList
from scheduler.cluster.port import WatchEvent
from scheduler.cluster.write_guard import GuardedClusterAPI
from scheduler.cluster.write_guard import Write
from scheduler.framework.errors import APIError

# The status an API server gives a request it is not allowed to serve.
FORBIDDEN = 403


class WriteRefusedError(APIError):
    """A write was attempted through a read-only client."""


# How a reader is shown an object it reads: (resource, object) -> the object it sees.
View = Callable[[str, dict[str, Any]], dict[str, Any]]


class ReadOnlyCluster(GuardedClusterAPI[ClusterClient]):
    """Forwards reads to `inner`, each object read shown through `view` (as it is without
    one); every write raises WriteRefusedError (its message starts with `who`, e.g.
    "explain is read-only") and is remembered in `refused`."""

    def __init__(self, inner: ClusterClient, who: str, view: View | None = None) -> None:
        super().__init__(inner)
        self._who = who
        self._view = view
        self.refused: list[str] = []

    def _refuse(self, what: str) -> WriteRefusedError:
        self.refused.append(what)
        return WriteRefusedError(FORBIDDEN, f"{self._who}: refused {what}")

    async def _guard(self, write: Write, send: Callable[[], Awaitable[None]]) -> None:
        raise self._refuse(write.description)

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        obj = await self._api.get(resource, namespace, name)
        return obj if self._view is None else self._view(resource, obj)

    async def list(
        self, resource: str, *, namespace: str | None = None, field_selector: str | None = None
    ) -> ObjectList:
        listed = await self._api.list(resource, namespace=namespace, field_selector=field_selector)
        if self._view is None:
            return listed
        items = [self._view(resource, item) for item in listed.items]
        return ObjectList(items, listed.resource_version)

    def watch(
        self,
        resource: str,
        *,
        resource_version: str,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent]:
        stream = self._api.watch(
            resource,
            resource_version=resource_version,
            field_selector=field_selector,
            allow_bookmarks=allow_bookmarks,
        )
        return stream if self._view is None else _viewed(stream, resource, self._view)

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        raise self._refuse(f"updating a {resource} object")

    async def create_event(self, event: Mapping[str, Any]) -> None:
        raise self._refuse("creating an Event")

    async def close(self) -> None:
        await self._api.close()


async def _viewed(
    stream: AsyncIterator[WatchEvent], resource: str, view: View
) -> AsyncIterator[WatchEvent]:
    try:
        async for event in stream:
            yield WatchEvent(event.type, view(resource, event.object))
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
