"""Cutting an awaited call off when some seconds of Clock time have passed.

`asyncio.timeout` counts the loop's own time, which a FakeClock does not move; the deadline
here is a Clock timer instead. What a cut-off call means is the caller's to say (the lease
loop gives the attempt up, a fenced write fails as not sent), so `ClockDeadline` only cancels
the work and remembers that it did. A deadline that may move later (a leader's tenure, which
each renewal extends) is asked again when it falls due, and waits on while it has moved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import Any

from scheduler.framework.clock import Clock


def _always() -> bool:
    return True


def _fixed() -> float:
    return 0.0


class ClockDeadline:
    """`with ClockDeadline(clock, seconds, work):` cancels `work` once `seconds` pass, if
    `may_cancel()` still allows it then; `passed` tells a CancelledError the deadline caused
    from any other. With `remaining`, the deadline is whatever `remaining()` says when the
    seconds pass: while that is above 0 it waits that much longer. Leaving the block cancels
    the timer."""

    def __init__(
        self,
        clock: Clock,
        seconds: float,
        work: asyncio.Future[Any],
        *,
        may_cancel: Callable[[], bool] = _always,
        remaining: Callable[[], float] = _fixed,
    ) -> None:
        self._clock = clock
        self._work = work
        self._may_cancel = may_cancel
        self._remaining = remaining
        self.passed = False
        self._timer = clock.call_later(seconds, self._expire)

    def _expire(self) -> None:
        later = self._remaining()
        if later > 0:
            self._timer = self._clock.call_later(later, self._expire)
            return
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
