"""The daemon's secure port: served before anything waits for the API server, as
kube-scheduler's Run serves it, and not at all with `--secure-port=0`."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from structlog.testing import capture_logs

from scheduler.app.run_options import RunOptions
from scheduler.app.secure_port_options import SecurePortOptions
from scheduler.app.serve import secure_port_access
from scheduler.framework.clock import SystemClock
from scheduler.framework.errors import ConfigError
from tests.app.daemon_on_sim import OPTIONS
from tests.app.daemon_on_sim import RecordingCluster
from tests.app.daemon_on_sim import bound
from tests.app.daemon_on_sim import cluster_with_a_pending_pod
from tests.app.daemon_on_sim import scheduling_daemon
from tests.app.daemon_on_sim import secure_get
from tests.app.daemon_on_sim import until


class StallingLeaseCluster(RecordingCluster):
    """Holds every read of a Lease until told to answer, as an API server that is slow to."""

    def __init__(self) -> None:
        super().__init__()
        self.answer_leases = asyncio.Event()
        self.lease_reads = 0

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        if resource == "leases":
            self.lease_reads += 1
            await self.answer_leases.wait()
        return await super().get(resource, namespace, name)


async def test_the_port_answers_while_the_lease_is_first_sought() -> None:
    cluster = StallingLeaseCluster()
    daemon = scheduling_daemon("production", cluster, leader_elect=True)
    starting = asyncio.create_task(daemon.start())
    try:
        await until(lambda: cluster.lease_reads == 1)
        # Alive, not ready: nothing has listed yet.
        assert await secure_get(daemon.port, "/livez") == (200, "ok")
        assert await secure_get(daemon.port, "/healthz") == (200, "ok")
        status, body = await secure_get(daemon.port, "/readyz")
        assert (status, "[-]sched-handler-sync failed" in body) == (500, True)
        assert cluster.calls == []
        cluster.answer_leases.set()
        await starting
        await until(lambda: daemon.is_leader)
    finally:
        cluster.answer_leases.set()
        await asyncio.gather(starting, return_exceptions=True)
        await daemon.shutdown()


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port something else listens on already."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


@pytest.mark.parametrize("leader_elect", [True, False])
async def test_a_port_in_use_fails_the_start_before_any_lease_or_list(
    taken_port: int, leader_elect: bool
) -> None:
    cluster = cluster_with_a_pending_pod()
    options = replace(OPTIONS, secure_port=taken_port)
    daemon = scheduling_daemon("production", cluster, leader_elect=leader_elect, options=options)
    with pytest.raises(OSError):
        await daemon.start()
    await daemon.shutdown()
    assert cluster.calls == []


async def test_with_the_port_off_it_schedules_serving_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_certificate(*_: object) -> None:
        raise AssertionError("a certificate was made for a port that is off")

    monkeypatch.setattr("scheduler.app.http_server.generate_self_signed", no_certificate)
    cluster = cluster_with_a_pending_pod()
    daemon = scheduling_daemon("production", cluster, options=OPTIONS)
    try:
        with capture_logs() as logs:
            await daemon.start()
        await until(lambda: bound(cluster, "p"))
    finally:
        await daemon.shutdown()
    assert daemon.port == 0
    events = [record["event"] for record in logs]
    assert "secure port off (--secure-port=0): not serving health, metrics or configz" in events
    assert "serving health and metrics" not in events


async def test_with_the_port_off_its_flags_are_not_read_and_no_review_client_opens() -> None:
    # As kube-scheduler, which applies the serving options only for a port that is on.
    broken = SecurePortOptions(
        authentication_kubeconfig="/nonexistent/kubeconfig", tls_min_version="VersionTLS99"
    )
    off = RunOptions(secure_port=0, secure_port_access=broken)
    assert await secure_port_access(off, SystemClock()) is None
    with pytest.raises(ConfigError, match="VersionTLS99"):
        await secure_port_access(RunOptions(secure_port_access=broken), SystemClock())
