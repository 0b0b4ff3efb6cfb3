"""A running pod being resized in place, beside kube-scheduler: the node's free room is what
the kubelet reports the pod holding (a resize down counts once actuated), so both schedulers
refuse a pod that the pod's lowered spec alone would let in, in the same words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.upstream_scheduler import SCHEDULER_NAME as UPSTREAM
from tests.e2e.upstream_scheduler import kube_scheduler_running
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

BIND_TIMEOUT_S = 60.0


def test_a_resize_down_not_yet_actuated_still_holds_its_room(
    e2e_binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    workload: Workload,
    tmp_path: Path,
) -> None:
    [node] = workload.create_nodes(1, cpu="4")
    # Lowered to 1 CPU in its spec; the kubelet still runs it with 3.
    running = workload.create_pod(
        workload.pod_manifest("resizing", "elsewhere", cpu="1", node_name=node)
    )
    [container] = running["spec"]["containers"]
    reported = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": container["name"],
                "image": container["image"],
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": "2026-12-06T07:00:00Z"}},
                "resources": {"requests": {"cpu": "3"}},
                "allocatedResources": {"cpu": "3"},
            }
        ],
    }
    patched = workload.admin.request(
        "PATCH",
        f"/api/v1/namespaces/{workload.namespace}/pods/resizing/status",
        {"status": reported},
        content_type="application/merge-patch+json",
    )
    assert patched.status == 200, patched
    assert patched.body["status"]["containerStatuses"][0]["resources"] == {"requests": {"cpu": "3"}}

    ours = unique("sched")
    daemons.start(ours)
    with kube_scheduler_running(e2e_binaries, control_plane, tmp_path / "ks.log"):
        for scheduler, prefix in ((ours, "ours"), (UPSTREAM, "theirs")):
            workload.create_pods([f"{prefix}-two"], scheduler, cpu="2")
        failures = workload.wait_events(
            "FailedScheduling", ["ours-two", "theirs-two"], timeout_s=BIND_TIMEOUT_S
        )

    mine, theirs = (failures[f"{p}-two"][0]["note"] for p in ("ours", "theirs"))
    assert mine == theirs
    # Other tests' nodes may share the cluster; the pod's own selector keeps it off them.
    assert "1 Insufficient cpu" in mine
    assert workload.placements(["ours-two", "theirs-two"]) == {"ours-two": "", "theirs-two": ""}
