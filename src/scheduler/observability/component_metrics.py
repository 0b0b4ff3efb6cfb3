"""Recording the component-wide families (see `component_catalog`), and the process collector.

`RestClientMetrics` is what the API client reports each request to; `SecurePortMetrics` what
the secure port reports each caller's authentication and authorization to. The process
families are prometheus_client's, plus the three the Go client has and it lacks.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version
from pathlib import Path

from prometheus_client import CollectorRegistry
from prometheus_client import ProcessCollector
from prometheus_client.core import CounterMetricFamily
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from scheduler.observability import component_catalog as cc
from scheduler.observability.families import new_counter
from scheduler.observability.families import new_gauge
from scheduler.observability.families import new_histogram

# The kube-scheduler release whose behaviour, flags and metrics this scheduler follows.
KUBERNETES_RELEASE = "v1.36.3"
# Upstream's names for users it counts one by one; everyone else is folded.
_KNOWN_USERS = frozenset(
    {"admin", "client", "kube_proxy", "kubelet", "system:serviceaccount:kube-system:default"}
)
# What the Go client reports for an unlimited address space (procfs' "unlimited").
_UNLIMITED = float(2**64 - 1)


class RestClientMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._requests = new_counter(cc.REST_CLIENT_REQUESTS, registry)
        self._duration = new_histogram(cc.REST_CLIENT_REQUEST_DURATION, registry)
        self._waited = new_histogram(cc.REST_CLIENT_RATE_LIMITER_DURATION, registry)
        self._sent = new_histogram(cc.REST_CLIENT_REQUEST_SIZE, registry)
        self._received = new_histogram(cc.REST_CLIENT_RESPONSE_SIZE, registry)

    def rate_limited(self, method: str, host: str, seconds: float) -> None:
        self._waited.labels(method, host).observe(seconds)

    def request(self, method: str, host: str, code: int, seconds: float, *, sent: int) -> None:
        """One request answered with `code` after `seconds`; 0 means no answer (`<error>`)."""
        self._requests.labels(str(code) if code else "<error>", method, host).inc()
        self._duration.labels(method, host).observe(seconds)
        self._sent.labels(method, host).observe(sent)

    def response_size(self, method: str, host: str, received: int) -> None:
        self._received.labels(method, host).observe(received)


class SecurePortMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._authn = new_counter(cc.AUTHENTICATION_ATTEMPTS, registry)
        self._authn_seconds = new_histogram(cc.AUTHENTICATION_DURATION, registry)
        self._users = new_counter(cc.AUTHENTICATED_USER_REQUESTS, registry)
        self._authz = new_counter(cc.AUTHORIZATION_ATTEMPTS, registry)
        self._authz_seconds = new_histogram(cc.AUTHORIZATION_DURATION, registry)
        self._cert_expiry = new_histogram(cc.CLIENT_CERTIFICATE_EXPIRATION, registry)

    def authentication(self, result: str, seconds: float, username: str = "") -> None:
        """`result` is success, failure or error; `username` for a success."""
        self._authn.labels(result).inc()
        self._authn_seconds.labels(result).observe(seconds)
        if result == "success":
            self._users.labels(folded_username(username)).inc()

    def authorization(self, result: str, seconds: float) -> None:
        """`result` is allowed, denied, no-opinion or error."""
        self._authz.labels(result).inc()
        self._authz_seconds.labels(result).observe(seconds)

    def client_certificate(self, seconds_left: float) -> None:
        self._cert_expiry.observe(seconds_left)


def folded_username(name: str) -> str:
    if name in _KNOWN_USERS:
        return name
    return "email_id" if "@" in name else "other"


def register_process_and_build(registry: CollectorRegistry) -> None:
    ProcessCollector(registry=registry)
    registry.register(_ProcessExtras())
    build = new_gauge(cc.BUILD_INFO, registry)
    major, minor = KUBERNETES_RELEASE.removeprefix("v").split(".")[:2]
    build.labels(
        build_date="",
        compiler=sys.implementation.name,
        git_commit="",
        git_tree_state="",
        git_version=f"v{own_version()}",
        go_version=f"python{platform.python_version()}",
        major=major,
        minor=minor,
        platform=f"{sys.platform}/{platform.machine()}",
    ).set(1)


def own_version() -> str:
    """The installed kube-pyscheduler release (0.0.0 when run from a bare checkout)."""
    try:
        return version("kube-pyscheduler")
    except PackageNotFoundError:
        return "0.0.0"


class _ProcessExtras(Collector):
    """process_virtual_memory_max_bytes and the network byte counters, read from /proc as the
    Go client reads them; absent where /proc is."""

    def __init__(self, proc: Path = Path("/proc/self")) -> None:
        self._proc = proc

    def collect(self) -> Iterator[Metric]:
        limit = self._address_space_limit()
        if limit is not None:
            yield GaugeMetricFamily(
                "process_virtual_memory_max_bytes",
                "Maximum amount of virtual memory available in bytes.",
                value=limit,
            )
        octets = self._ip_octets()
        if octets is not None:
            received, sent = octets
            yield CounterMetricFamily(
                "process_network_receive_bytes",
                "Number of bytes received by the process over the network.",
                value=received,
            )
            yield CounterMetricFamily(
                "process_network_transmit_bytes",
                "Number of bytes sent by the process over the network.",
                value=sent,
            )

    def _address_space_limit(self) -> float | None:
        try:
            lines = (self._proc / "limits").read_text().splitlines()
        except OSError:
            return None
        for line in lines:
            if line.startswith("Max address space"):
                soft = line.split()[3]
                return _UNLIMITED if soft == "unlimited" else float(soft)
        return None

    def _ip_octets(self) -> tuple[float, float] | None:
        try:
            lines = (self._proc / "net" / "netstat").read_text().splitlines()
        except OSError:
            return None
        rows = [line.split() for line in lines if line.startswith("IpExt:")]
        if len(rows) < 2:
            return None
        fields = dict(zip(rows[0][1:], rows[1][1:], strict=False))
        try:
            return float(fields["InOctets"]), float(fields["OutOctets"])
        except (KeyError, ValueError):
            return None
