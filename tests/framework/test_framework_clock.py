"""The system clock: monotonic now, UTC wall time, and timers on the running loop."""

from __future__ import annotations

import asyncio
from datetime import UTC

from scheduler.framework.clock import SystemClock


def test_now_never_goes_back() -> None:
    clock = SystemClock()
    first = clock.now()
    assert clock.now() >= first


def test_wall_time_is_in_utc() -> None:
    assert SystemClock().wall().tzinfo is UTC


async def test_a_timer_fires_on_the_loop_and_can_be_cancelled() -> None:
    clock = SystemClock()
    fired = asyncio.Event()
    cancelled: list[str] = []
    clock.call_later(0, fired.set)
    timer = clock.call_later(0, lambda: cancelled.append("ran"))
    timer.cancel()
    await asyncio.wait_for(fired.wait(), timeout=5)
    # The cancelled timer was due no later than the one that fired, yet it did not run.
    await clock.sleep(0)
    assert cancelled == []
