"""TokenReview and SubjectAccessReview calls to the API server, retried as upstream retries them.

The reviews are created through the cluster port (`create`), on a client of their own: it has
its own credentials (`--authentication-kubeconfig` / `--authorization-kubeconfig`), a 10 s
request timeout and a large rate budget, as kube-scheduler's delegated clients have.

A review that gets no answer, or a 429 or 5xx, is retried up to five attempts in all, waiting
0.5 s and then 1.5 times longer each time (upstream adds 20 % jitter; we do not, so that tests
stay deterministic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import Protocol

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


def _retryable(error: APIError) -> bool:
    return error.status in {0, 429} or error.status >= 500


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
            if attempt == RETRY_ATTEMPTS or not _retryable(error):
                raise
            await clock.sleep(delay)
            delay *= RETRY_FACTOR
            continue
        status = answer.get("status")
        return status if isinstance(status, dict) else {}
    raise AssertionError("unreachable")
