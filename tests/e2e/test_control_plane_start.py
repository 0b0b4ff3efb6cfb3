"""Starting the control plane when something gets in the way."""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import controlplane
from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.controlplane import ControlPlaneStartError
from tests.e2e.processes import free_loopback_port

pytestmark = pytest.mark.e2e

BROKEN_APISERVER = """#!/bin/sh
echo "this kube-apiserver refuses to start" >&2
exit 3
"""


@pytest.fixture
def private_temp_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Sends the plane's work dir and etcd data dir under tmp_path, so leftovers show."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setattr(controlplane, "SHM", tmp_path / "shm")
    for name in ("tmp", "shm"):
        (tmp_path / name).mkdir()
    return tmp_path


@pytest.fixture
def held_port() -> Iterator[int]:
    """A loopback port some other program listens on (and never answers)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_failed_start_reports_the_logs_and_leaves_nothing_behind(
    e2e_binaries: ControlPlaneBinaries, private_temp_dirs: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "kube-apiserver"
    broken.write_text(BROKEN_APISERVER)
    broken.chmod(0o755)
    plane = ControlPlane(
        ControlPlaneBinaries(
            kube_apiserver=broken,
            kube_scheduler=e2e_binaries.kube_scheduler,
            etcd=e2e_binaries.etcd,
        )
    )

    with pytest.raises(ControlPlaneStartError) as raised:
        plane.start()

    message = str(raised.value)
    assert "kube-apiserver exited while waiting for /readyz" in message
    assert "this kube-apiserver refuses to start" in message
    assert "--- etcd.log" in message
    assert list((private_temp_dirs / "tmp").iterdir()) == []
    assert list((private_temp_dirs / "shm").iterdir()) == []
    with pytest.raises(OSError):  # etcd was stopped too
        ApiClient(plane.etcd_url).request("GET", "/health", timeout_s=5)


def test_start_moves_to_new_ports_when_one_is_taken(
    e2e_binaries: ControlPlaneBinaries, held_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second port handed out, etcd's peer port, turns out to be taken. (Not the client
    # port: a probe of a squatter that never answers would only add a probe timeout.)
    handed_out = [held_port, free_loopback_port()]
    monkeypatch.setattr(
        controlplane,
        "free_loopback_port",
        lambda: handed_out.pop() if handed_out else free_loopback_port(),
    )

    with ControlPlane(e2e_binaries) as plane:
        ready = plane.admin_client().get("/readyz")
        log = plane.logs_tail(200)

    assert ready.status == 200
    assert "address already in use" in log
