"""Which scheduling cycles record per-plugin durations."""

from __future__ import annotations

import random

DEFAULT_PLUGIN_METRICS_PERCENT = 10
"""Upstream times the plugins of one cycle in ten."""


class PluginMetricsSampler:
    """Decides once per scheduling cycle whether that cycle times each plugin call.

    Timing every call of every plugin would cost about as much as the cheapest plugins
    themselves. A random sample of cycles fills `scheduler_plugin_execution_duration_seconds`
    just as well at any real load, and the seeded `rng` makes the choice reproducible.
    """

    __slots__ = ("_percent", "_rng")

    def __init__(self, rng: random.Random, percent: int = DEFAULT_PLUGIN_METRICS_PERCENT) -> None:
        self._rng = rng
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
