"""What /metrics would show for a plugin's own series, read the way the scheduler reads them."""

from __future__ import annotations

from typing import Protocol

from scheduler.framework import MetricSamples
from scheduler.observability import SchedulerMetrics


class Reporter(Protocol):
    def metric_samples(self) -> MetricSamples: ...


def reported(reporter: Reporter, name: str, **labels: str) -> float | None:
    """The value of one series of the reporter's families on a fresh scheduler's /metrics;
    None when the reporter has no such series."""
    metrics = SchedulerMetrics()
    metrics.add_plugin_samples_source(reporter.metric_samples)
    value: float | None = metrics.registry.get_sample_value(name, labels)
    return value
