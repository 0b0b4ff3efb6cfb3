"""The exception family: API errors carry their status, and say whether a retry may help."""

from __future__ import annotations

import pytest

from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import GoneError
from scheduler.framework.errors import NotFoundError
from scheduler.framework.errors import SchedulerError


def test_an_api_error_reads_as_status_and_message() -> None:
    error = APIError(422, "bad body", retry_after=2.5)
    assert str(error) == "422: bad body"
    assert (error.status, error.text, error.retry_after) == (422, "bad body", 2.5)
    assert isinstance(error, SchedulerError)


@pytest.mark.parametrize(
    ("error", "status"),
    [(NotFoundError("gone"), 404), (ConflictError("taken"), 409), (GoneError("too old"), 410)],
)
def test_each_named_error_has_its_status(error: APIError, status: int) -> None:
    assert error.status == status
    assert str(error).startswith(f"{status}: ")
    assert not error.retriable


@pytest.mark.parametrize(
    ("status", "retriable"),
    [(0, True), (429, True), (500, True), (503, True), (400, False), (403, False)],
)
def test_only_no_answer_too_many_requests_and_server_failures_are_retriable(
    status: int, retriable: bool
) -> None:
    assert APIError(status, "x").retriable is retriable
