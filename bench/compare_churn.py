"""The churn load: pods created at a fixed rate while the scheduler runs, and what it shows.

A scheduler keeps up when its backlog (pods the watch has seen created but not yet bound) stays
within `KEEP_UP_BACKLOG_S` seconds of creation at the set rate throughout the run, and it binds
at the rate pods were created (to within `OFFERED_SHARE`); one that falls behind sees its
backlog grow without bound, by the rate it lacks, for as long as creation lasts. (A short run
may end before the backlog says so; the bound rate still does.)
On a machine this small the scheduler also competes with the bench's creating threads for the
CPU, so a run counts as kept up only where the rate asked for was offered too (to within
`OFFERED_SHARE`); the null scheduler's runs show what the machine offers with a scheduler that
takes next to no CPU.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from bench.compare_watch import percentile

KEEP_UP_BACKLOG_S = 2.0
OFFERED_SHARE = 0.9


class Pacer:
    """Calls `emit(i)` for i = 0 .. total-1, pod i at `i / rate` seconds after the start.

    Late calls are caught up at once (never skipped), so the average rate holds even when one
    step is slow; `clock` and `sleep` are injectable so that the pacing can be tested."""

    def __init__(
        self,
        rate: float,
        total: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be positive, got {rate!r}")
        if total < 0:
            raise ValueError(f"total must not be negative, got {total!r}")
        self.rate = rate
        self.total = total
        self._clock = clock
        self._sleep = sleep

    def due(self, elapsed_s: float) -> int:
        """How many calls are due `elapsed_s` seconds after the start."""
        if elapsed_s < 0:
            return 0
        return min(self.total, math.floor(elapsed_s * self.rate) + 1)

    def run(self, emit: Callable[[int], None]) -> float:
        """Paces all calls; returns the seconds from the start to the last call."""
        started = self._clock()
        sent = 0
        while sent < self.total:
            due = self.due(self._clock() - started)
            for index in range(sent, due):
                emit(index)
            sent = max(sent, due)
            if sent < self.total:
                next_at = started + sent / self.rate
                self._sleep(max(0.0, next_at - self._clock()))
        return self._clock() - started


@dataclass(frozen=True)
class BacklogSample:
    """One reading of the watch: pods seen created and pods seen bound so far."""

    created: int
    bound: int

    @property
    def backlog(self) -> int:
        return max(0, self.created - self.bound)


def kept_up(rate: float, created_per_s: float, bound_per_s: float, max_backlog: int) -> bool:
    offered = created_per_s >= OFFERED_SHARE * rate
    bound_as_created = bound_per_s >= OFFERED_SHARE * created_per_s
    return offered and bound_as_created and max_backlog <= max(1.0, rate * KEEP_UP_BACKLOG_S)


def churn_figures(
    rate: float,
    pods: int,
    latencies_s: Sequence[float],
    samples: Sequence[BacklogSample],
    *,
    creation_s: float,
    last_bound_s: float,
) -> dict[str, float]:
    """The figures of one churn run. `creation_s` is how long creating took, `last_bound_s`
    how long from the first creation to the last binding the watch saw."""
    max_backlog = max((s.backlog for s in samples), default=0)
    latencies_ms = [1000.0 * s for s in latencies_s]
    created_per_s = pods / creation_s if creation_s > 0 else float("inf")
    bound_per_s = pods / last_bound_s if last_bound_s > 0 else float("inf")
    return {
        "rate": rate,
        "created_per_s": created_per_s,
        "bound_per_s": bound_per_s,
        "p50_latency_ms": percentile(latencies_ms, 50),
        "p99_latency_ms": percentile(latencies_ms, 99),
        "max_backlog": float(max_backlog),
        "kept_up": 1.0 if kept_up(rate, created_per_s, bound_per_s, max_backlog) else 0.0,
    }
