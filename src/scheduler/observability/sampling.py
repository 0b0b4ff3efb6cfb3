"""Which scheduling cycles, and which PreEnqueue runs, record per-plugin durations."""

from __future__ import annotations

import random

DEFAULT_PLUGIN_METRICS_PERCENT = 10
"""Upstream times the plugins of one cycle in ten."""

_GATE_SEED = 0


class PluginMetricsSampler:
    """Decides once per scheduling cycle whether that cycle times each plugin call.

    Timing every call of every plugin would cost about as much as the cheapest plugins
    themselves. A random sample of cycles fills `scheduler_plugin_execution_duration_seconds`
    just as well at any real load, and the seeded `rng` makes the choice reproducible.
    """

    __slots__ = ("_gate_rng", "_percent", "_rng")

    def __init__(self, rng: random.Random, percent: int = DEFAULT_PLUGIN_METRICS_PERCENT) -> None:
        self._rng = rng
        # PreEnqueue runs on queue events, not cycles; drawing for them from `rng`, which also
        # breaks ties between nodes, would make placements depend on how many events came.
        self._gate_rng = random.Random(_GATE_SEED)
        self._percent = 0
        self.percent = percent

    @property
    def percent(self) -> int:
        return self._percent

    @percent.setter
    def percent(self, percent: int) -> None:
        """A new share of cycles to time (a test times every one)."""
        if not 0 <= percent <= 100:
            raise ValueError(f"sample percent must be within 0..100, got {percent}")
        self._percent = percent

    def sample(self) -> bool:
        """True when the cycle about to start should record plugin durations."""
        return self._rng.randrange(100) < self._percent

    def sample_pre_enqueue(self) -> bool:
        """True when the PreEnqueue run about to start should time each plugin (upstream
        draws for each run, with the same share as for cycles)."""
        return self._gate_rng.randrange(100) < self._percent
