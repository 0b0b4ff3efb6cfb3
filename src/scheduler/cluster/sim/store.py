"""One resource's objects plus the bounded change history its watch streams read from.

Every watcher reads the same history list by position; a write appends one entry and wakes the
waiting watchers, so fan-out costs nothing per event per watcher beyond the read itself. The
history keeps at least `history_limit` changes; a watch from an older version gets 410 Gone,
and so does a watcher that falls that far behind.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from scheduler.cluster.port import WatchEvent
from scheduler.cluster.port import WatchEventType
from scheduler.cluster.resource_kinds import ResourceKind
from scheduler.cluster.sim.field_selector import FieldSelector
from scheduler.framework.errors import GoneError

ObjectKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Change:
    """One committed write; `previous` is the object before it (None for ADDED)."""

    revision: int
    type: WatchEventType
    object: dict[str, Any]
    previous: dict[str, Any] | None


class ResourceStore:
    def __init__(self, kind: ResourceKind, history_limit: int) -> None:
        self.kind = kind
        self.objects: dict[ObjectKey, dict[str, Any]] = {}
        self._history: list[Change] = []
        self._history_limit = history_limit
        # Trim in chunks so that trimming costs O(1) per write amortised.
        self._trim_slack = max(1, history_limit // 4)
        self._dropped = 0  # how many changes were trimmed off the front (absolute position base)
        self._oldest_servable = 0  # a watch from a version below this is Gone
        self._waiters: list[asyncio.Future[None]] = []
        self._epoch = 0  # bumping it ends every open stream

    @property
    def latest_revision(self) -> int:
        """The resourceVersion of the newest change to this resource (0 if none)."""
        return self._history[-1].revision if self._history else 0

    def record(self, change: Change) -> None:
        """Apply a committed change to the objects and the history, then wake watchers."""
        key = object_key(change.object)
        if change.type == "DELETED":
            self.objects.pop(key, None)
        else:
            self.objects[key] = change.object
        self._history.append(change)
        if len(self._history) > self._history_limit + self._trim_slack:
            excess = len(self._history) - self._history_limit
            self._oldest_servable = self._history[excess - 1].revision
            del self._history[:excess]
            self._dropped += excess
        self._wake()

    def end_streams(self) -> None:
        self._epoch += 1
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def _wait_for_change(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    def _too_old(self, since: int) -> GoneError:
        return GoneError(
            f"too old resource version: {since} ({self._oldest_servable})"
            f" for {self.kind.qualified_name}"
        )

    def snapshot_events(self, selector: FieldSelector) -> list[WatchEvent]:
        """The current objects as ADDED events (a watch from version "0" starts with these)."""
        return [
            WatchEvent("ADDED", obj)
            for _, obj in sorted(self.objects.items())
            if selector.empty or selector.matches(obj)
        ]

    async def stream(
        self, since: int, selector: FieldSelector, allow_bookmarks: bool
    ) -> AsyncGenerator[WatchEvent, None]:
        """Changes after revision `since`, filtered and translated by `selector`.

        Bookmarks report progress made through changes the selector filtered out, so that a
        filtered watcher's resume version keeps moving and its resume stays within history.
        """
        if since < self._oldest_servable:
            raise self._too_old(since)
        position = self._dropped + bisect.bisect_right(
            self._history, since, key=lambda c: c.revision
        )
        epoch = self._epoch
        delivered = scanned = since
        while epoch == self._epoch:
            if position < self._dropped:
                raise self._too_old(delivered)
            if position == self._dropped + len(self._history):
                if allow_bookmarks and scanned > delivered:
                    delivered = scanned
                    yield WatchEvent("BOOKMARK", self._bookmark(scanned))
                else:
                    await self._wait_for_change()
                continue
            change = self._history[position - self._dropped]
            position += 1
            scanned = change.revision
            event = translate(change, selector)
            if event is not None:
                delivered = change.revision
                yield event

    def _bookmark(self, revision: int) -> dict[str, Any]:
        return {
            "apiVersion": self.kind.api_version,
            "kind": self.kind.kind,
            "metadata": {"resourceVersion": str(revision)},
        }


def translate(change: Change, selector: FieldSelector) -> WatchEvent | None:
    """The event a filtered watcher sees: objects entering the selection are ADDED, leaving it
    DELETED (with the new state), as the API server's watch cache reports them."""
    if selector.empty:
        return WatchEvent(change.type, change.object)
    if change.type == "ADDED":
        return WatchEvent("ADDED", change.object) if selector.matches(change.object) else None
    if change.type == "DELETED":
        return WatchEvent("DELETED", change.object) if selector.matches(change.object) else None
    was = change.previous is not None and selector.matches(change.previous)
    now = selector.matches(change.object)
    if was and now:
        return WatchEvent("MODIFIED", change.object)
    if now:
        return WatchEvent("ADDED", change.object)
    if was:
        return WatchEvent("DELETED", change.object)
    return None


def object_key(obj: dict[str, Any]) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
