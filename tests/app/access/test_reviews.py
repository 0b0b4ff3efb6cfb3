"""Which failed reviews are tried again: where client-go's webhook.DefaultShouldRetry says so."""

from __future__ import annotations

import errno
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import aiohttp
import pytest

from scheduler.app.access.reviews import ACCESS_REVIEWS
from scheduler.app.access.reviews import RETRY_ATTEMPTS
from scheduler.app.access.reviews import create_review
from scheduler.framework.errors import APIError
from tests.app.access.fakes import SleeplessClock


def answered(status: int, *, retry_after: float | None = None) -> APIError:
    return APIError(status, "the server says no", retry_after=retry_after)


def unanswered(cause: BaseException) -> APIError:
    """As the kube client raises it: no answer, from the transport's own exception."""
    try:
        raise APIError(0, f"POST /apis: no answer from the API server: {cause}") from cause
    except APIError as error:
        return error


class FailingAPI:
    """Fails every review with a fresh `failure()`, counting the attempts."""

    def __init__(self, failure: Callable[[], APIError]) -> None:
        self._failure = failure
        self.attempts = 0

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        self.attempts += 1
        raise self._failure()


RETRIED: list[Any] = [
    pytest.param(lambda: answered(500), id="internal-error"),
    pytest.param(lambda: answered(504), id="timeout"),
    pytest.param(lambda: answered(429), id="too-many-requests"),
    pytest.param(lambda: answered(503, retry_after=1), id="retry-after"),
    pytest.param(lambda: answered(403, retry_after=2), id="any-answer-with-retry-after"),
    pytest.param(
        lambda: unanswered(aiohttp.ClientOSError(errno.ECONNRESET, "Connection reset by peer")),
        id="connection-reset",
    ),
    pytest.param(
        lambda: unanswered(ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")),
        id="connection-reset-raw",
    ),
    pytest.param(
        lambda: unanswered(aiohttp.ServerDisconnectedError()), id="connection-lost-unanswered"
    ),
    pytest.param(
        lambda: unanswered(aiohttp.ClientPayloadError("Response payload is not completed")),
        id="connection-lost-mid-answer",
    ),
]
NOT_RETRIED: list[Any] = [
    pytest.param(lambda: answered(503), id="unavailable-without-retry-after"),
    pytest.param(lambda: answered(502), id="bad-gateway"),
    pytest.param(lambda: answered(503, retry_after=0), id="retry-after-zero"),
    pytest.param(lambda: answered(403), id="forbidden"),
    pytest.param(
        lambda: unanswered(ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")),
        id="connection-refused",
    ),
    pytest.param(
        lambda: unanswered(aiohttp.ClientOSError(errno.ECONNREFUSED, "Connect call failed")),
        id="connection-refused-by-aiohttp",
    ),
    pytest.param(lambda: unanswered(TimeoutError()), id="our-timeout"),
]


async def attempts_for(failure: Callable[[], APIError]) -> tuple[int, list[float]]:
    clock = SleeplessClock()
    api = FailingAPI(failure)
    with pytest.raises(APIError):
        await create_review(api, ACCESS_REVIEWS, {}, clock)
    return api.attempts, clock.sleeps


@pytest.mark.parametrize("failure", RETRIED)
async def test_retried_with_backoff_as_upstream(failure: Callable[[], APIError]) -> None:
    assert await attempts_for(failure) == (RETRY_ATTEMPTS, [0.5, 0.75, 1.125, 1.6875])


@pytest.mark.parametrize("failure", NOT_RETRIED)
async def test_failing_at_once_as_upstream(failure: Callable[[], APIError]) -> None:
    assert await attempts_for(failure) == (1, [])
