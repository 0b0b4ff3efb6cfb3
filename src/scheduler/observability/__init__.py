"""Metrics under kube-scheduler's names and structured logging.

Layer 1: imports only the framework and objects packages, prometheus_client and structlog.
"""

# One logger for every component; plugins reach the same one through scheduler.framework.
from scheduler.framework.log import get_logger
from scheduler.observability.buckets import exponential_buckets
from scheduler.observability.catalog import Kind, MetricSpec, Stability
from scheduler.observability.exposition import CONTENT_TYPE, render_text
from scheduler.observability.label_values import attempts_label
from scheduler.observability.logs import (
    V_ATTEMPT,
    V_BIND,
    V_DEBUG,
    V_LIBRARY_DEBUG,
    V_PLUGIN,
    LogFormat,
    configure_logging,
    enabled,
    log_v,
    reset_logging,
    verbosity,
)
from scheduler.observability.sampling import DEFAULT_PLUGIN_METRICS_PERCENT, PluginMetricsSampler
from scheduler.observability.scheduler_metrics import SchedulerMetrics

__all__ = [
    "CONTENT_TYPE",
    "DEFAULT_PLUGIN_METRICS_PERCENT",
    "V_ATTEMPT",
    "V_BIND",
    "V_DEBUG",
    "V_LIBRARY_DEBUG",
    "V_PLUGIN",
    "Kind",
    "LogFormat",
    "MetricSpec",
    "PluginMetricsSampler",
    "SchedulerMetrics",
    "Stability",
    "attempts_label",
    "configure_logging",
    "enabled",
    "exponential_buckets",
    "get_logger",
    "log_v",
    "render_text",
    "reset_logging",
    "verbosity",
]
