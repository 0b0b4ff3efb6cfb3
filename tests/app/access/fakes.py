"""A stand-in for the API server's review endpoints, and a clock that never blocks a sleeper."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from typing import Any

from scheduler.framework.errors import APIError
from scheduler.testing import FakeClock

Answer = Callable[[Mapping[str, Any]], dict[str, Any]]


class ReviewServer:
    """Answers `create(resource, body)` with `answer(spec)` as the review's status, and
    records every body it was sent. `failures` answers that many calls with `failure_status`
    (by default an InternalError, which reviews retry)."""

    def __init__(self, answer: Answer, *, failures: int = 0, failure_status: int = 500) -> None:
        self._answer = answer
        self.failures = failures
        self.failure_status = failure_status
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append((resource, dict(obj)))
        if self.failures > 0:
            self.failures -= 1
            raise APIError(self.failure_status, "etcdserver: request timed out")
        return {**obj, "status": self._answer(obj["spec"])}


class SleeplessClock(FakeClock):
    """A FakeClock whose `sleep` moves time itself, recording how long each wait was."""

    def __init__(self) -> None:
        # Certificates in the tests are issued for the real present.
        super().__init__(wall_start=datetime.now(UTC))
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.advance(seconds)
