"""Cutting an awaited call off when some seconds of Clock time have passed.

`asyncio.timeout` counts the loop's own time, which a FakeClock does not move; the deadline
here is a Clock timer instead. What a cut-off call means is the caller's to say (the lease
loop gives the attempt up, a fenced write fails as not sent), so `ClockDeadline` only cancels
the work and remembers that it did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import Any

from scheduler.framework.clock import Clock


def _always() -> bool:
    return True


class ClockDeadline:
    """`with ClockDeadline(clock, seconds, work):` cancels `work` once `seconds` pass, if
    `may_cancel()` still allows it then; `passed` tells a CancelledError the deadline caused
    from any other. Leaving the block cancels the timer."""

    def __init__(
        self,
        clock: Clock,
        seconds: float,
        work: asyncio.Future[Any],
        *,
        may_cancel: Callable[[], bool] = _always,
    ) -> None:
        self._work = work
        self._may_cancel = may_cancel
        self.passed = False
        self._timer = clock.call_later(seconds, self._expire)

    def _expire(self) -> None:
        if not self._may_cancel():
            return
        self.passed = True
        self._work.cancel()

    def __enter__(self) -> ClockDeadline:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._timer.cancel()
