"""The daemon's leader election client times its requests out as client-go's lock client."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.app import serve as serve_module
from scheduler.app.run_options import RunOptions
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config.models import LeaderElectionConfiguration


class ConnectedError(Exception):
    """Stops `serve` once it has asked for its clients."""


async def lease_request_timeout(
    monkeypatch: pytest.MonkeyPatch, renew_deadline: str, retry_period: str
) -> Any:
    asked: dict[str, Any] = {}

    async def connect_daemon(**options: Any) -> Any:
        asked.update(options)
        raise ConnectedError

    monkeypatch.setattr(serve_module, "connect_daemon", connect_daemon)
    election = LeaderElectionConfiguration.model_validate(
        {"renewDeadline": renew_deadline, "retryPeriod": retry_period}
    )
    config = KubeSchedulerConfiguration(leader_election=election)
    with pytest.raises(ConnectedError):
        await serve_module.serve(config, [], {}, RunOptions(secure_port=0))
    return asked["lease_request_timeout"]


async def test_the_lease_client_waits_half_the_renew_deadline_but_never_under_a_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert await lease_request_timeout(monkeypatch, "10s", "2s") == 5.0
    assert await lease_request_timeout(monkeypatch, "3s", "1s") == 1.5
    assert await lease_request_timeout(monkeypatch, "1500ms", "1s") == 1.0
