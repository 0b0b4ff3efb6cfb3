"""Metric families of every Prometheus-fed plugin, labelled by profile and plugin."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from scheduler.framework import PLUGIN_METRICS

_LABELS = ("profile", "plugin")

DATA_AGE = Gauge(
    "kube_pyscheduler_plugin_prometheus_data_age_seconds",
    "[ALPHA] Seconds since the plugin's newest value from Prometheus was fetched "
    "(-1 before the first).",
    _LABELS,
    registry=PLUGIN_METRICS,
)
STALE = Gauge(
    "kube_pyscheduler_plugin_prometheus_stale",
    "[ALPHA] 1 while the plugin has no value fresher than maxStalenessSeconds and so scores "
    "every node neutrally.",
    _LABELS,
    registry=PLUGIN_METRICS,
)
QUERIES = Counter(
    "kube_pyscheduler_plugin_prometheus_queries",
    "[ALPHA] PromQL queries the plugin sent, by result (success, error); retries count.",
    (*_LABELS, "result"),
    registry=PLUGIN_METRICS,
)
NEUTRAL_SCORES = Counter(
    "kube_pyscheduler_plugin_neutral_scores",
    "[ALPHA] Scoring calls in which the plugin scored every node neutrally for want of fresh data.",
    _LABELS,
    registry=PLUGIN_METRICS,
)
