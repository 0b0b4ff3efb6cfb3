"""The benchmark's null scheduler against a real kube-apiserver: it binds every pending pod of
its schedulerName and, asked to, writes each one's Scheduled Event as schedulers do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.controlplane import ControlPlane
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
# Upper bounds for waiting on the server, not synchronisation delays.
BIND_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def test_null_scheduler_binds_and_writes_the_scheduled_events(
    control_plane: ControlPlane, workload: Workload
) -> None:
    name = unique("null")
    workload.create_nodes(2)
    pods = workload.create_pods([f"p{i}" for i in range(3)], name)
    argv = [
        sys.executable,
        "-m",
        "bench.null_scheduler",
        "--kubeconfig",
        str(control_plane.kubeconfig_path),
        "--scheduler-name",
        name,
        "--scheduled-events",
    ]
    process = subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        placed = workload.wait_bound(pods, timeout_s=BIND_TIMEOUT_S)
        events = workload.wait_events("Scheduled", pods, timeout_s=BIND_TIMEOUT_S)
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=STOP_TIMEOUT_S)
    for pod in pods:
        [event] = events[pod]
        assert event["note"] == f"Successfully assigned {workload.namespace}/{pod} to {placed[pod]}"
        assert event["reportingController"] == name
        assert event["type"] == "Normal"
    assert "failed" not in errors, errors
