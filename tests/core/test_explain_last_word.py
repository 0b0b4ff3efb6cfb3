"""`explain` sets what it finds against the pod's PodScheduled condition: none at all means no
scheduler has written on the pod; a different message means the cluster changed since."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.app.cli import main
from scheduler.core.explain.model import Reported
from tests.core.explained_cluster import explained

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: only}
status: {allocatable: {cpu: '2', memory: 1Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: default, creationTimestamp: '2026-12-01T10:00:00Z'}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]
"""

STALE = """
status:
  phase: Pending
  conditions:
  - type: PodScheduled
    status: 'False'
    reason: Unschedulable
    message: '0/1 nodes are available: 1 Insufficient cpu.'
    lastTransitionTime: '2026-12-01T10:00:01Z'
"""


async def test_a_pod_no_scheduler_wrote_on_is_said_to_be_untouched() -> None:
    explanation, text = await explained(CLUSTER, "default", "api")
    assert explanation.outcome == "Schedulable" and explanation.reported is None
    assert explanation.to_json()["podScheduled"] is None
    assert explanation.to_json()["created"] == "2026-12-01T10:00:00Z"
    assert (
        "No scheduler has written on this pod yet (created 2026-12-01T10:00:00Z): it has no "
        "PodScheduled condition. Is a scheduler with its schedulerName running and leading?"
    ) in text


async def test_a_condition_from_an_older_cluster_is_shown_as_out_of_date() -> None:
    explanation, text = await explained(CLUSTER + STALE, "default", "api")
    assert explanation.outcome == "Schedulable"
    assert explanation.reported == Reported(
        "False",
        "Unschedulable",
        "0/1 nodes are available: 1 Insufficient cpu.",
        "2026-12-01T10:00:01Z",
    )
    assert explanation.to_json()["podScheduled"]["reason"] == "Unschedulable"
    assert (
        "The pod's PodScheduled condition says otherwise (False, Unschedulable, since "
        "2026-12-01T10:00:01Z): 0/1 nodes are available: 1 Insufficient cpu. The cluster has "
        "changed since the scheduler's last attempt"
    ) in text


def test_the_condition_simulate_leaves_says_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(CLUSTER.replace("cpu: '1'", "cpu: '3'"))
    assert main(["explain", "default/api", "--scenario", str(scenario)]) == 0
    text = capsys.readouterr().out
    assert "Pod default/api (profile default-scheduler): Unschedulable" in text
    assert "The pod's PodScheduled condition says the same (False, Unschedulable, since " in text


def test_a_gated_pod_shows_the_api_servers_condition_and_no_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "scenario.yaml"
    gated = CLUSTER.replace("spec:\n", "spec:\n  schedulingGates: [{name: example.com/quota}]\n")
    scenario.write_text(gated)
    assert main(["explain", "default/api", "--scenario", str(scenario)]) == 0
    text = capsys.readouterr().out
    assert "Pod default/api (profile default-scheduler): Gated" in text
    assert "The pod's PodScheduled condition: False, SchedulingGated, since " in text
    assert "Scheduling is blocked due to non-empty scheduling gates" in text
    assert "No scheduler has written" not in text and "says otherwise" not in text
