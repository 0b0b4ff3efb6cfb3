"""The loop of the in-memory cluster's small controllers: run a finite sync pass after every
change to the resources the controller follows, until cancelled or the cluster closes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable

from scheduler.cluster.sim.cluster import SimCluster


async def sync_on_changes(
    sim: SimCluster, resources: Iterable[str], sync: Callable[[], Awaitable[object]], name: str
) -> None:
    changed = asyncio.Event()

    async def watch(resource: str) -> None:
        async for _ in sim.watch(resource, resource_version="0"):
            changed.set()

    watchers = [
        asyncio.create_task(watch(resource), name=f"{name}:{resource}") for resource in resources
    ]
    waiter: asyncio.Task[bool] | None = None
    try:
        while not all(w.done() for w in watchers):
            waiter = asyncio.create_task(changed.wait(), name=f"{name}:changed")
            await asyncio.wait([waiter, *watchers], return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if changed.is_set():
                changed.clear()
                await sync()
    finally:
        # Cancelled while waiting: the waiter must not outlive the loop.
        pending = [*watchers, *([waiter] if waiter is not None else [])]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
