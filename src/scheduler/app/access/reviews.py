"""TokenReview and SubjectAccessReview calls to the API server, retried as upstream retries them.

The reviews are created through the cluster port (`create`), on a client of their own: it has
its own credentials (`--authentication-kubeconfig` / `--authorization-kubeconfig`), a 10 s
request timeout and a large rate budget, as kube-scheduler's delegated clients have.

A review is retried where client-go's webhook.DefaultShouldRetry retries it: the connection
was reset or dropped after the request went out (HTTP/2's "client connection lost"; our HTTP/1.1
transport sees the server disconnect or the answer cut short), or the server answered 500
(InternalError), 504 (Timeout), 429 (TooManyRequests) or anything with a Retry-After. A refused
connection, a timeout on our side, other answers (a 503 without Retry-After, say) fail at once.
Up to five attempts in all, waiting 0.5 s and then 1.5 times longer each time, whatever the
Retry-After says (upstream adds 20 % jitter; we do not, so that tests stay deterministic).
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any
from typing import Protocol

import aiohttp

from scheduler.cluster.resource_kinds import ResourceKind
from scheduler.framework.clock import Clock
from scheduler.framework.errors import APIError

TOKEN_REVIEWS = ResourceKind(
    "tokenreviews", "authentication.k8s.io", "v1", "TokenReview", namespaced=False
)
ACCESS_REVIEWS = ResourceKind(
    "subjectaccessreviews", "authorization.k8s.io", "v1", "SubjectAccessReview", namespaced=False
)

RETRY_ATTEMPTS = 5
RETRY_FIRST_DELAY = 0.5
RETRY_FACTOR = 1.5


class ReviewAPI(Protocol):
    """The part of the cluster port a review needs."""

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]: ...


# APIError's status when no answer came at all.
_NO_ANSWER = 0
# What the server said that asks for another attempt: InternalError, TooManyRequests, Timeout.
_RETRIED_STATUSES = frozenset({500, 429, 504})
# The HTTP/1.1 counterparts of HTTP/2's lost connection: the server closed it without
# answering, or in the middle of the answer.
_CONNECTION_LOST = (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError)


def should_retry(error: APIError) -> bool:
    """Whether webhook.DefaultShouldRetry would try the review again."""
    if error.status == _NO_ANSWER:
        return any(_connection_broke(cause) for cause in _causes(error))
    if error.status in _RETRIED_STATUSES:
        return True
    # SuggestsClientDelay: a Retry-After of whole seconds, at least one.
    return error.retry_after is not None and error.retry_after >= 1


def _connection_broke(cause: BaseException) -> bool:
    if isinstance(cause, _CONNECTION_LOST):
        return True
    # aiohttp re-raises a reset as its own OSError, keeping the errno (utilnet.IsConnectionReset
    # looks for ECONNRESET the same way).
    return isinstance(cause, OSError) and cause.errno == errno.ECONNRESET


def _causes(error: BaseException) -> Iterator[BaseException]:
    """The transport failures behind `error` (the client raises APIError from them)."""
    seen: set[int] = set()
    cause: BaseException | None = error.__cause__ or error.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        yield cause
        cause = cause.__cause__ or cause.__context__


async def create_review(
    api: ReviewAPI, kind: ResourceKind, spec: Mapping[str, Any], clock: Clock
) -> dict[str, Any]:
    """POST a review with `spec` and return the `status` of the server's answer."""
    body = {"apiVersion": kind.api_version, "kind": kind.kind, "spec": dict(spec)}
    delay = RETRY_FIRST_DELAY
    for attempt in range(1, RETRY_ATTEMPTS + 1):
        try:
            answer = await api.create(kind.resource, body)
        except APIError as error:
            if attempt == RETRY_ATTEMPTS or not should_retry(error):
                raise
            await clock.sleep(delay)
            delay *= RETRY_FACTOR
            continue
        status = answer.get("status")
        return status if isinstance(status, dict) else {}
    raise AssertionError("unreachable")
