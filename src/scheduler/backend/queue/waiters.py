"""Coroutines parked until the queue may have a pod for them."""

from __future__ import annotations

import asyncio


class PopWaiters:
    """A set of futures resolved together; waking is a hint, the waiter re-checks the queue."""

    __slots__ = ("_futures",)

    def __init__(self) -> None:
        self._futures: list[asyncio.Future[None]] = []

    def __len__(self) -> int:
        return len(self._futures)

    async def wait(self) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._futures.append(future)
        try:
            await future
        finally:
            if future in self._futures:
                self._futures.remove(future)

    def wake_all(self) -> None:
        futures, self._futures = self._futures, []
        for future in futures:
            if not future.done():
                future.set_result(None)
