"""`/metrics/slis`: every health check's outcome, as every Kubernetes component serves them.

Each time `/healthz`, `/livez` or `/readyz` runs its checks, each check's outcome is recorded:
`kubernetes_healthcheck{name,type}` is 1 when it passed and 0 when it failed, and
`kubernetes_healthchecks_total{name,status,type}` counts runs by `status` ("success" or
"error"); `type` is the endpoint. Monitoring agents that watch kube-scheduler's health through
these families (Datadog's kube-scheduler check reads this path) read ours the same way.

As upstream, a check asked for alone (`/readyz/<name>`) and a check left out with `?exclude=`
record nothing.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from scheduler.observability.catalog import HEALTHCHECK
from scheduler.observability.catalog import HEALTHCHECKS
from scheduler.observability.exposition import render_text
from scheduler.observability.families import new_counter
from scheduler.observability.families import new_gauge


class HealthCheckSLIs:
    """The two families, in a registry of their own."""

    def __init__(self) -> None:
        self._registry = CollectorRegistry(auto_describe=True)
        self._last = new_gauge(HEALTHCHECK, self._registry)
        self._runs = new_counter(HEALTHCHECKS, self._registry)

    def observe(self, endpoint: str, check: str, passed: bool) -> None:
        self._last.labels(name=check, type=endpoint).set(1 if passed else 0)
        status = "success" if passed else "error"
        self._runs.labels(name=check, status=status, type=endpoint).inc()

    def reset(self) -> None:
        """`DELETE /metrics/slis`: every series goes until its check runs again."""
        self._last.clear()
        self._runs.clear()

    def render(self) -> bytes:
        """The `/metrics/slis` body, in the media type of `exposition.CONTENT_TYPE`."""
        return render_text(self._registry)
