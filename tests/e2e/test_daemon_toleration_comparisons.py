"""Tolerations with Lt and Gt on a real apiserver, beside kube-scheduler v1.36.3 with the same
TaintTolerationComparisonOperators gate: a pod tolerating `sla` above 40 goes to the node
tainted sla=50 under both schedulers, and one tolerating `sla` below 20 stays pending under
both with the same message.

The apiserver accepts the operators only with the gate on, so this test runs its own control
plane.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler.testing import make_node
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.side_by_side import BIND_TIMEOUT_S
from tests.e2e.side_by_side import EVENT_TIMEOUT_S
from tests.e2e.side_by_side import admin_and_namespace
from tests.e2e.side_by_side import both_schedulers
from tests.e2e.upstream_scheduler import SCHEDULER_NAME as UPSTREAM
from tests.e2e.workload import NODE_LABEL
from tests.e2e.workload import Workload
from tests.e2e.workload import pod_scheduled_condition
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

GATE = "--feature-gates=TaintTolerationComparisonOperators=true"


@pytest.fixture(scope="module")
def comparisons_plane(e2e_binaries: ControlPlaneBinaries) -> Iterator[ControlPlane]:
    with ControlPlane(e2e_binaries, (GATE,)) as plane:
        yield plane


def _tainted_node(workload: Workload, sla: str) -> str:
    name = unique(f"sla-{sla}")
    node = make_node(name).capacity(cpu="4", memory="8Gi", pods=110).taint("sla", sla)
    node.label(NODE_LABEL, workload.label_value)
    manifest = node.dict()
    manifest["metadata"].pop("uid", None)
    created = workload.admin.post("/api/v1/nodes", manifest)
    assert created.status == 201, created
    workload.nodes.append(name)
    return name


def _tolerating_pod(
    workload: Workload, name: str, scheduler: str, operator: str, bound: str
) -> None:
    manifest = workload.pod_manifest(name, scheduler)
    toleration = {"key": "sla", "operator": operator, "value": bound, "effect": "NoSchedule"}
    manifest["spec"]["tolerations"] = [toleration]
    workload.create_pod(manifest)


def test_both_schedulers_read_lt_and_gt_alike(
    e2e_binaries: ControlPlaneBinaries, comparisons_plane: ControlPlane, tmp_path: Path
) -> None:
    workload = Workload(*admin_and_namespace(comparisons_plane))
    _tainted_node(workload, "30")
    above = _tainted_node(workload, "50")

    with both_schedulers(e2e_binaries, comparisons_plane, tmp_path, [GATE]) as ours:
        for owner, scheduler in (("ours", ours), ("theirs", UPSTREAM)):
            _tolerating_pod(workload, f"{owner}-gt", scheduler, "Gt", "40")
            _tolerating_pod(workload, f"{owner}-lt", scheduler, "Lt", "20")

        placed = workload.wait_bound(["ours-gt", "theirs-gt"], timeout_s=BIND_TIMEOUT_S)
        assert placed == {"ours-gt": above, "theirs-gt": above}
        workload.wait_events(
            "FailedScheduling", ["ours-lt", "theirs-lt"], timeout_s=EVENT_TIMEOUT_S
        )
        pods = workload.pods()
        conditions = [pod_scheduled_condition(pods[n]) for n in ("ours-lt", "theirs-lt")]
        assert all(c is not None for c in conditions)
        messages = [c["message"] for c in conditions if c is not None]
        assert "2 node(s) had untolerated taint(s)" in messages[1]
        assert messages[0] == messages[1]
