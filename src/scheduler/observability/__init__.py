"""Metrics under kube-scheduler's names and structured logging.

Layer 1: imports only the framework and objects packages, prometheus_client and structlog.
"""

# One logger for every component; plugins reach the same one through scheduler.framework.
from scheduler.framework.log import get_logger
from scheduler.observability.buckets import exponential_buckets
from scheduler.observability.catalog import Kind
from scheduler.observability.catalog import MetricSpec
from scheduler.observability.catalog import Stability
from scheduler.observability.exposition import CONTENT_TYPE
from scheduler.observability.exposition import render_text
from scheduler.observability.label_values import attempts_label
from scheduler.observability.logs import V_ATTEMPT
from scheduler.observability.logs import V_BIND
from scheduler.observability.logs import V_DEBUG
from scheduler.observability.logs import V_LIBRARY_DEBUG
from scheduler.observability.logs import V_PLUGIN
from scheduler.observability.logs import LogFormat
from scheduler.observability.logs import configure_logging
from scheduler.observability.logs import enabled
from scheduler.observability.logs import log_v
from scheduler.observability.logs import reset_logging
from scheduler.observability.logs import set_verbosity
from scheduler.observability.logs import verbosity
from scheduler.observability.sampling import DEFAULT_PLUGIN_METRICS_PERCENT
from scheduler.observability.sampling import PluginMetricsSampler
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
    "set_verbosity",
    "verbosity",
]
