"""A clock that moves only when a test says so."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from datetime import timedelta


class _FakeTimer:
    __slots__ = ("callback", "cancelled", "deadline")

    def __init__(self, deadline: float, callback: Callable[[], None]) -> None:
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """Implements `scheduler.framework.Clock`. `advance` fires due timers and wakes sleepers."""

    def __init__(self, start: float = 1000.0, wall_start: datetime | None = None) -> None:
        self._now = start
        self._start = start
        self._wall_start = wall_start or datetime(2026, 1, 1, tzinfo=UTC)
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._sequence = itertools.count()

    def now(self) -> float:
        return self._now

    def wall(self) -> datetime:
        return self._wall_start + timedelta(seconds=self._now - self._start)

    def call_later(self, delay: float, callback: Callable[[], None]) -> _FakeTimer:
        timer = _FakeTimer(self._now + max(delay, 0.0), callback)
        heapq.heappush(self._timers, (timer.deadline, next(self._sequence), timer))
        return timer

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        timer = self.call_later(seconds, wake)
        try:
            await future
        finally:
            timer.cancel()

    def advance(self, seconds: float) -> None:
        """Move time forward, firing every timer that falls due, in deadline order."""
        target = self._now + seconds
        while self._timers and self._timers[0][0] <= target:
            deadline, _, timer = heapq.heappop(self._timers)
            self._now = max(self._now, deadline)
            if not timer.cancelled:
                timer.callback()
        self._now = target

    @property
    def pending_timers(self) -> int:
        return sum(1 for _, _, t in self._timers if not t.cancelled)

    def next_deadline(self) -> float | None:
        live = [d for d, _, t in self._timers if not t.cancelled]
        return min(live) if live else None
