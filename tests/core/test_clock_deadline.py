"""ClockDeadline cuts work off on Clock time, only when allowed, and leaves no timer behind."""

from __future__ import annotations

import asyncio

import pytest

from scheduler.core.clock_deadline import ClockDeadline
from scheduler.testing.fake_clock import FakeClock


async def test_work_cancelled_when_the_seconds_pass() -> None:
    clock = FakeClock()
    work: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    with ClockDeadline(clock, 5.0, work) as deadline:
        clock.advance(4.9)
        assert not work.cancelled()
        clock.advance(0.1)
        with pytest.raises(asyncio.CancelledError):
            await work
    assert deadline.passed
    assert clock.pending_timers == 0


async def test_work_that_may_not_be_cancelled_runs_on() -> None:
    clock = FakeClock()
    work: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    with ClockDeadline(clock, 1.0, work, may_cancel=lambda: False) as deadline:
        clock.advance(2.0)
        work.set_result("answer")
        assert await work == "answer"
    assert not deadline.passed


async def test_other_cancellation_is_not_the_deadline() -> None:
    clock = FakeClock()
    work: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    with ClockDeadline(clock, 1.0, work) as deadline:
        work.cancel()
        with pytest.raises(asyncio.CancelledError):
            await work
    assert not deadline.passed
    # Leaving the block cancelled the timer: a later expiry does nothing.
    assert clock.pending_timers == 0
    clock.advance(2.0)
    assert not deadline.passed
