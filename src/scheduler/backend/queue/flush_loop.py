"""The thin periodic loop that drives the queue's flushes; the logic lives in the queue."""

from __future__ import annotations

import math
from typing import Protocol

from scheduler.backend.queue.backoff import ORDERING_WINDOW
from scheduler.framework.clock import Clock

LEFTOVER_CHECK_INTERVAL = 30.0


class FlushableQueue(Protocol):
    @property
    def closed(self) -> bool: ...

    def flush_backoff_completed(self) -> None: ...

    def flush_unschedulable_leftover(self) -> None: ...


async def run_queue_flushes(queue: FlushableQueue, clock: Clock) -> None:
    """Every second flush finished backoffs; every 30 s flush pods stuck in the pool.

    Backoff flushes are aligned to whole seconds, the edges of the backoff ordering windows,
    so each window is released in one go. Returns when the queue is closed.
    """
    tick = math.floor(clock.now() / ORDERING_WINDOW) * ORDERING_WINDOW + ORDERING_WINDOW
    leftover_due = clock.now() + LEFTOVER_CHECK_INTERVAL
    while not queue.closed:
        await clock.sleep(max(0.0, tick - clock.now()))
        if queue.closed:
            return
        queue.flush_backoff_completed()
        now = clock.now()
        if now >= leftover_due:
            queue.flush_unschedulable_leftover()
            leftover_due += LEFTOVER_CHECK_INTERVAL
        tick += ORDERING_WINDOW
        if tick <= now:
            # Fell behind (a long pause): skip the missed ticks rather than run them in a burst.
            tick = math.floor(now / ORDERING_WINDOW) * ORDERING_WINDOW + ORDERING_WINDOW
