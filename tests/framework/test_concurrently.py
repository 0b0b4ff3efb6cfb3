"""run_concurrently: a plugin's calls at once, bounded, stopped by the first failure."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable

import pytest

from scheduler.framework.concurrently import run_concurrently


async def test_no_more_than_the_limit_run_at_once() -> None:
    running = {"now": 0, "peak": 0}

    def call() -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            running["now"] += 1
            running["peak"] = max(running["peak"], running["now"])
            await asyncio.sleep(0)  # a turn of the loop, as an API call yields
            running["now"] -= 1

        return run

    await run_concurrently([call() for _ in range(7)], limit=3)
    assert running["peak"] == 3


async def test_the_first_failure_is_raised_as_it_was_and_stops_the_rest() -> None:
    started: list[int] = []
    finished: list[int] = []

    def call(index: int) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            started.append(index)
            if index == 0:
                raise LookupError("boom")
            await asyncio.sleep(0)
            finished.append(index)

        return run

    with pytest.raises(LookupError, match="boom"):
        await run_concurrently([call(i) for i in range(5)], limit=2)
    # The failure cancelled the calls under way beside it, and the last never started.
    assert finished == []
    assert 0 in started and len(started) < 5
