"""Fire-and-forget API writes (pod status, annotations) off the scheduling loop, in order per
object."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable
from collections.abc import Callable

from scheduler.observability import V_DEBUG
from scheduler.observability import get_logger
from scheduler.observability import log_v

_log = get_logger(__name__)

ApiCall = Callable[[], Awaitable[None]]


class ApiDispatcher:
    """A bounded pool of workers running API calls.

    The scheduling cycle never awaits the API; it hands calls here. Calls about one object
    (one key) run one at a time, in the order they were submitted: two attempts of a pod can
    end within one request's latency, and if their status patches raced on two connections the
    older verdict could land last and stay on the pod. Calls about different objects run in
    parallel. Failures are logged, not raised: a write that could not be made must not fail a
    pod's scheduling.
    """

    def __init__(self, workers: int = 4) -> None:
        # Keys whose first call may start now; a key is in here at most once.
        self._ready: asyncio.Queue[str] = asyncio.Queue()
        # Per key, the calls not yet finished; the first one is running or about to.
        self._calls: dict[str, deque[tuple[str, ApiCall]]] = {}
        self._workers = workers
        self._tasks: list[asyncio.Task[None]] = []
        self._pending = 0
        # Keys whose first call is running, and who waits for it to end.
        self._running: set[str] = set()
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._work(), name=f"api-dispatcher-{i}")
                for i in range(self._workers)
            ]

    def submit(self, key: str, description: str, call: ApiCall) -> None:
        """Run `call` after every call submitted earlier under the same `key`."""
        self._pending += 1
        calls = self._calls.get(key)
        if calls is not None:
            calls.append((description, call))
            return
        self._calls[key] = deque([(description, call)])
        self._ready.put_nowait(key)

    async def supersede(self, key: str) -> None:
        """Drop the calls under `key` that have not started, and wait for the one running:
        what they would write is out of date (a pod about to be bound), and must not land
        after what comes next, as kube-scheduler's own write of a failure lands before the
        pod is tried again."""
        calls = self._calls.get(key)
        if not calls:
            return
        running = key in self._running
        dropped = len(calls) - (1 if running else 0)
        for _ in range(dropped):
            description, _call = calls.pop()
            log_v(_log, V_DEBUG, "API call dropped: superseded", call=description)
        self._pending -= dropped
        if not running:
            # The key stays on the ready queue with no calls; the worker taking it lets go.
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(key, []).append(waiter)
        await waiter

    @property
    def pending(self) -> int:
        """Calls submitted and not yet finished (queued or in progress)."""
        return self._pending

    async def drain(self) -> None:
        # A key goes back on the ready queue before its finished call is marked done, so the
        # join cannot return while any key still has calls.
        await self._ready.join()

    async def _work(self) -> None:
        while True:
            key = await self._ready.get()
            calls = self._calls[key]
            if not calls:  # superseded before it started
                del self._calls[key]
                self._ready.task_done()
                continue
            description, call = calls[0]
            self._running.add(key)
            try:
                await call()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _log.warning("API call failed", call=description, err=str(exc))
            finally:
                self._running.discard(key)
                for waiter in self._waiters.pop(key, ()):
                    if not waiter.done():
                        waiter.set_result(None)
                calls.popleft()
                self._pending -= 1
                if calls:
                    self._ready.put_nowait(key)
                else:
                    del self._calls[key]
                self._ready.task_done()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
