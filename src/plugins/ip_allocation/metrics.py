"""IPAllocation's own counters, reported at scrape time (the framework's `MetricsReporter`)."""

from __future__ import annotations

from collections import Counter

from scheduler.framework import MetricSamples

ALLOCATIONS = "kube_pyscheduler_plugin_ip_allocations_total"
WRITE_CONFLICTS = "kube_pyscheduler_plugin_ip_pool_write_conflicts_total"


class IPAllocationCounts:
    """Pool writes by result (allocated, released, failed) and stale-version conflicts, of one
    plugin instance (one profile)."""

    def __init__(self, profile: str) -> None:
        self._profile = profile
        self._allocations: Counter[str] = Counter()
        self._conflicts = 0

    def allocation(self, result: str) -> None:
        self._allocations[result] += 1

    def write_conflict(self) -> None:
        self._conflicts += 1

    def metric_samples(self) -> MetricSamples:
        profile = self._profile
        return {
            ALLOCATIONS: [
                ((profile, result), float(count)) for result, count in self._allocations.items()
            ],
            WRITE_CONFLICTS: [((profile,), float(self._conflicts))],
        }
