"""A Prometheus source for scoring plugins: PromQL refreshed in the background, per node."""

from plugins.helpers.prometheus.query import QueryError
from plugins.helpers.prometheus.query import node_of
from plugins.helpers.prometheus.query import per_node_values
from plugins.helpers.prometheus.settings import DEFAULT_ADDRESS
from plugins.helpers.prometheus.settings import PrometheusSourceArgs
from plugins.helpers.prometheus.source import PrometheusSource

__all__ = [
    "DEFAULT_ADDRESS",
    "PrometheusSource",
    "PrometheusSourceArgs",
    "QueryError",
    "node_of",
    "per_node_values",
]
