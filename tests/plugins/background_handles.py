"""Handles for plugins that start background work: one that only records it, one that runs it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from scheduler.testing import FakeHandle


class RecordingHandle(FakeHandle):
    """Keeps the background work a plugin asks for without running it, so a unit test feeds
    the plugin's data itself."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.background: list[tuple[str, Callable[[], Awaitable[None]]]] = []

    def start_background(
        self, name: str, work: Callable[[], Awaitable[None]], *, one_off: bool = False
    ) -> None:
        self.background.append((name, work))


class RunningHandle(FakeHandle):
    """Runs background work as tasks on the current loop; `stop` cancels them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tasks: list[asyncio.Task[None]] = []

    def start_background(
        self, name: str, work: Callable[[], Awaitable[None]], *, one_off: bool = False
    ) -> None:
        async def run() -> None:
            await work()

        self.tasks.append(asyncio.get_running_loop().create_task(run(), name=name))

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        results = await asyncio.gather(*self.tasks, return_exceptions=True)
        for result in results:
            if isinstance(result, Exception):
                raise result
