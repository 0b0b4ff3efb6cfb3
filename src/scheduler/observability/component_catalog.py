"""Families every Kubernetes component exposes beside its own: the API client's, the secure
port's authentication and authorization, and the build. Names, labels, buckets and stability
are component-base's and client-go's; HELP texts are ours.
"""

from __future__ import annotations

from scheduler.observability.buckets import exponential_buckets
from scheduler.observability.catalog import Kind
from scheduler.observability.catalog import MetricSpec
from scheduler.observability.catalog import Stability

# client-go's layouts: latency up to a minute, sizes from 64 bytes to 16 MiB.
_REQUEST_SECONDS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
_REQUEST_BYTES = tuple(float(b) for b in (64, 256, 512, 1024, *(4**i * 1024 for i in range(1, 8))))
_AUTH_SECONDS = exponential_buckets(0.001, 2, 15)
# Seconds until a client certificate expires: half an hour to a year.
_CERT_EXPIRY_SECONDS = (
    0.0, 1800.0, 3600.0, 7200.0, 21600.0, 43200.0, 86400.0, 172800.0, 345600.0, 604800.0,
    2592000.0, 7776000.0, 15552000.0, 31104000.0,
)  # fmt: skip

REST_CLIENT_REQUESTS = MetricSpec(
    "rest_client_requests_total",
    Kind.COUNTER,
    "Requests to the API server by HTTP status code (<error> without an answer), method and host.",
    ("code", "method", "host"),
)
REST_CLIENT_REQUEST_DURATION = MetricSpec(
    "rest_client_request_duration_seconds",
    Kind.HISTOGRAM,
    "Seconds from sending a request to the API server until its answer's headers arrived.",
    ("verb", "host"),
    _REQUEST_SECONDS,
)
REST_CLIENT_RATE_LIMITER_DURATION = MetricSpec(
    "rest_client_rate_limiter_duration_seconds",
    Kind.HISTOGRAM,
    "Seconds a request waited for the client-side rate limiter.",
    ("verb", "host"),
    _REQUEST_SECONDS,
)
REST_CLIENT_REQUEST_SIZE = MetricSpec(
    "rest_client_request_size_bytes",
    Kind.HISTOGRAM,
    "Bytes of request bodies sent to the API server.",
    ("verb", "host"),
    _REQUEST_BYTES,
)
REST_CLIENT_RESPONSE_SIZE = MetricSpec(
    "rest_client_response_size_bytes",
    Kind.HISTOGRAM,
    "Bytes of answers read from the API server (watch streams are not counted).",
    ("verb", "host"),
    _REQUEST_BYTES,
)
AUTHENTICATION_ATTEMPTS = MetricSpec(
    "authentication_attempts_total",
    Kind.COUNTER,
    "Requests to the secure port authenticated, by result: success (anonymous included), "
    "failure or error.",
    ("result",),
)
AUTHENTICATION_DURATION = MetricSpec(
    "authentication_duration_seconds",
    Kind.HISTOGRAM,
    "Seconds spent authenticating one request to the secure port, by result.",
    ("result",),
    _AUTH_SECONDS,
)
AUTHENTICATED_USER_REQUESTS = MetricSpec(
    "authenticated_user_requests_total",
    Kind.COUNTER,
    "Authenticated requests to the secure port by user, with names other than a few well-known "
    "ones folded into 'email_id' and 'other'.",
    ("username",),
)
AUTHORIZATION_ATTEMPTS = MetricSpec(
    "authorization_attempts_total",
    Kind.COUNTER,
    "Requests to the secure port authorized, by result: allowed, denied, no-opinion or error.",
    ("result",),
)
AUTHORIZATION_DURATION = MetricSpec(
    "authorization_duration_seconds",
    Kind.HISTOGRAM,
    "Seconds spent authorizing one request to the secure port, by result.",
    ("result",),
    _AUTH_SECONDS,
)
CLIENT_CERTIFICATE_EXPIRATION = MetricSpec(
    "apiserver_client_certificate_expiration_seconds",
    Kind.HISTOGRAM,
    "Seconds left before the client certificates presented to the secure port expire.",
    (),
    _CERT_EXPIRY_SECONDS,
)
BUILD_INFO = MetricSpec(
    "kubernetes_build_info",
    Kind.GAUGE,
    "Always 1; the labels say which build runs: git_version is kube-pyscheduler's release, "
    "major and minor the Kubernetes release it follows, compiler and go_version the Python.",
    (
        "build_date",
        "compiler",
        "git_commit",
        "git_tree_state",
        "git_version",
        "go_version",
        "major",
        "minor",
        "platform",
    ),
    stability=Stability.BETA,
)

FEATURE_ENABLED = MetricSpec(
    "kubernetes_feature_enabled",
    Kind.GAUGE,
    "1 for each feature gate that is on, 0 for each that is off, by name and stage (empty "
    "once GA): every gate kube-scheduler knows, as set by --feature-gates or by default.",
    ("name", "stage"),
    stability=Stability.BETA,
)

ALL: tuple[MetricSpec, ...] = (
    REST_CLIENT_REQUESTS,
    REST_CLIENT_REQUEST_DURATION,
    REST_CLIENT_RATE_LIMITER_DURATION,
    REST_CLIENT_REQUEST_SIZE,
    REST_CLIENT_RESPONSE_SIZE,
    AUTHENTICATION_ATTEMPTS,
    AUTHENTICATION_DURATION,
    AUTHENTICATED_USER_REQUESTS,
    AUTHORIZATION_ATTEMPTS,
    AUTHORIZATION_DURATION,
    CLIENT_CERTIFICATE_EXPIRATION,
    BUILD_INFO,
    FEATURE_ENABLED,
)
