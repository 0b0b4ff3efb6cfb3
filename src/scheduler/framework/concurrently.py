"""Awaiting several calls at once from a plugin, as upstream's Parallelizer runs a plugin's
work in parallel: at most `limit` at a time, and the first failure stops the calls not yet
made (those under way are cancelled) and is raised as it was raised.

Plugins do not touch asyncio themselves (the layer contracts keep them to this API), so the
scheduler can account for every task a plugin starts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable


async def run_concurrently(calls: Iterable[Callable[[], Awaitable[None]]], limit: int) -> None:
    """Run every call, at most `limit` (at least 1) at once; raise the first exception."""
    slots = asyncio.Semaphore(max(limit, 1))

    async def one(call: Callable[[], Awaitable[None]]) -> None:
        async with slots:
            await call()

    try:
        async with asyncio.TaskGroup() as group:
            for call in calls:
                group.create_task(one(call))
    except BaseExceptionGroup as failed:
        raise _first(failed) from None


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first
