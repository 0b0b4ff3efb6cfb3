"""Metric families of IPAllocation, labelled by profile."""

from __future__ import annotations

from prometheus_client import Counter

from scheduler.framework import PLUGIN_METRICS

ALLOCATIONS = Counter(
    "kube_pyscheduler_plugin_ip_allocations",
    "[ALPHA] Pool writes of IPAllocation by result: allocated, released, failed.",
    ("profile", "result"),
    registry=PLUGIN_METRICS,
)
WRITE_CONFLICTS = Counter(
    "kube_pyscheduler_plugin_ip_pool_write_conflicts",
    "[ALPHA] IPPool writes refused for a stale resourceVersion, each followed by a re-read.",
    ("profile",),
    registry=PLUGIN_METRICS,
)
