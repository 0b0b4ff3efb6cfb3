"""Fire-and-forget API writes (Events, pod status) off the scheduling loop, in order per pod."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from collections.abc import Callable

from scheduler.observability import get_logger

_log = get_logger(__name__)

ApiCall = Callable[[], Awaitable[None]]


class ApiDispatcher:
    """A bounded pool of workers draining a queue of API calls.

    The scheduling cycle never awaits the API; it hands calls here. Failures are logged, not
    raised: an Event that could not be written must not fail a pod's scheduling.
    """

    def __init__(self, workers: int = 4) -> None:
        self._queue: asyncio.Queue[tuple[str, ApiCall]] = asyncio.Queue()
        self._workers = workers
        self._tasks: list[asyncio.Task[None]] = []
        self._pending = 0

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._work(), name=f"api-dispatcher-{i}")
                for i in range(self._workers)
            ]

    def submit(self, description: str, call: ApiCall) -> None:
        self._pending += 1
        self._queue.put_nowait((description, call))

    @property
    def pending(self) -> int:
        """Calls submitted and not yet finished (queued or in progress)."""
        return self._pending

    async def drain(self) -> None:
        await self._queue.join()

    async def _work(self) -> None:
        while True:
            description, call = await self._queue.get()
            try:
                await call()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _log.warning("API call failed", call=description, err=str(exc))
            finally:
                self._pending -= 1
                self._queue.task_done()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
