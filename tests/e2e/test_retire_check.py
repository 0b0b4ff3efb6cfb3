"""The rollback guard against a real apiserver: `retire-check` fails while a pod names the
scheduler and passes once none does; the daemon's gauge sees the same stuck pod."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import poll_until
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

TIMEOUT_S = 30.0


def _retire_check(kubeconfig: Path, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "scheduler.app.cli",
            "retire-check",
            f"--scheduler-name={name}",
            f"--kubeconfig={kubeconfig}",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def test_retire_check_fails_while_a_pod_names_the_scheduler(
    control_plane: ControlPlane, daemons: DaemonLauncher, workload: Workload
) -> None:
    retired, running = unique("retired"), unique("running")
    daemon = daemons.start(running)
    daemon.wait_ready()
    [stuck] = workload.create_pods(["stuck"], retired)

    found = _retire_check(control_plane.kubeconfig_path, retired)
    assert found.returncode == 1, found
    assert f"{workload.namespace}   stuck   Pending   <none>" in found.stdout
    assert "1 pod(s) still name" in found.stdout
    # The running daemon serves another name, so it reports the pod as served by nobody.
    poll_until(
        lambda: daemon.metrics().total("scheduler_unserved_pods", scheduler_name=retired) == 1,
        "the unserved pod counted",
        timeout_s=TIMEOUT_S,
    )
    assert daemon.metrics().total("scheduler_unserved_pods", scheduler_name=running) == 0

    deleted = workload.admin.delete(f"/api/v1/namespaces/{workload.namespace}/pods/{stuck}")
    assert deleted.status == 200, deleted

    def passing() -> subprocess.CompletedProcess[str] | None:
        answer = _retire_check(control_plane.kubeconfig_path, retired)
        return answer if answer.returncode == 0 else None

    passed = poll_until(passing, "retire-check passing", timeout_s=TIMEOUT_S)
    assert "No pod names schedulerName" in passed.stdout
    poll_until(
        lambda: daemon.metrics().total("scheduler_unserved_pods", scheduler_name=retired) == 0,
        "the unserved pod gone",
        timeout_s=TIMEOUT_S,
    )
