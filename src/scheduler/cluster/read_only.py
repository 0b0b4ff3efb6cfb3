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


class ReadOnlyCluster(GuardedClusterAPI[ClusterClient]):
    """Forwards reads to `inner`; every write raises WriteRefusedError (its message starts
    with `who`, e.g. "explain is read-only") and is remembered in `refused`."""

    def __init__(self, inner: ClusterClient, who: str) -> None:
        super().__init__(inner)
        self._who = who
        self.refused: list[str] = []

    def _refuse(self, what: str) -> WriteRefusedError:
        self.refused.append(what)
        return WriteRefusedError(FORBIDDEN, f"{self._who}: refused {what}")

    async def _guard(self, write: Write, send: Callable[[], Awaitable[None]]) -> None:
        raise self._refuse(write.description)

    async def list(
        self, resource: str, *, namespace: str | None = None, field_selector: str | None = None
    ) -> ObjectList:
        return await self._api.list(resource, namespace=namespace, field_selector=field_selector)

    def watch(
        self,
        resource: str,
        *,
        resource_version: str,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent]:
        return self._api.watch(
            resource,
            resource_version=resource_version,
            field_selector=field_selector,
            allow_bookmarks=allow_bookmarks,
        )

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        raise self._refuse(f"updating a {resource} object")

    async def create_event(self, event: Mapping[str, Any]) -> None:
        raise self._refuse("creating an Event")

    async def close(self) -> None:
        await self._api.close()
