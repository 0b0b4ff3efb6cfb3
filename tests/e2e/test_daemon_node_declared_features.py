"""NodeDeclaredFeatures on a real apiserver, beside kube-scheduler: a pod whose container may
restart all containers goes only to a node that declares RestartAllContainersOnContainerExits,
and when none can take it both schedulers say so in the same words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduler.testing.builders import make_node
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.upstream_scheduler import SCHEDULER_NAME as UPSTREAM
from tests.e2e.upstream_scheduler import kube_scheduler_running
from tests.e2e.workload import NODE_LABEL
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

FEATURE = "RestartAllContainersOnContainerExits"
BIND_TIMEOUT_S = 60.0


def _node(workload: Workload, declared: list[str], cpu: str) -> str:
    name = unique("node")
    builder = make_node(name).capacity(cpu=cpu, memory="8Gi", pods=110)
    manifest: dict[str, Any] = builder.declared_features(*declared).dict()
    manifest["metadata"].pop("uid", None)
    manifest["metadata"].setdefault("labels", {})[NODE_LABEL] = workload.label_value
    created = workload.admin.post("/api/v1/nodes", manifest)
    assert created.status == 201, created
    assert created.body["status"].get("declaredFeatures") == (declared or None)
    workload.nodes.append(name)
    return name


def _restarting_pod(workload: Workload, name: str, scheduler: str, cpu: str) -> dict[str, Any]:
    manifest = workload.pod_manifest(name, scheduler, cpu=cpu)
    [container] = manifest["spec"]["containers"]
    container["restartPolicy"] = "Never"
    container["restartPolicyRules"] = [
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    ]
    return manifest


def test_a_pod_needing_a_declared_feature_lands_where_it_is_declared(
    e2e_binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    workload: Workload,
    tmp_path: Path,
) -> None:
    declaring = _node(workload, [FEATURE], cpu="2")
    _node(workload, [], cpu="4")
    ours = unique("sched")
    daemons.start(ours)
    with kube_scheduler_running(e2e_binaries, control_plane, tmp_path / "ks.log"):
        for scheduler, prefix in ((ours, "ours"), (UPSTREAM, "theirs")):
            workload.create_pod(_restarting_pod(workload, f"{prefix}-fits", scheduler, "100m"))
            # More CPU than the declaring node has; the other has it, but not the feature.
            workload.create_pod(_restarting_pod(workload, f"{prefix}-too-big", scheduler, "3"))
        placed = workload.wait_bound(["ours-fits", "theirs-fits"], timeout_s=BIND_TIMEOUT_S)
        failures = workload.wait_events(
            "FailedScheduling", ["ours-too-big", "theirs-too-big"], timeout_s=BIND_TIMEOUT_S
        )

    assert placed == {"ours-fits": declaring, "theirs-fits": declaring}
    mine, theirs = (failures[f"{p}-too-big"][0]["note"] for p in ("ours", "theirs"))
    assert mine == theirs
    assert "1 node(s) didn't match Pod's required features" in mine
    assert "1 Insufficient cpu" in mine
