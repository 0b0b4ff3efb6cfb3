"""`explain` on a bound pod: every reader sees it pending, so the report says whether it would
still go where it is, without the pod counting against its own node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler.app.cli import main
from scheduler.cluster.read_only import ReadOnlyCluster
from scheduler.cluster.sim import SimCluster
from scheduler.core.explain.as_pending import UnboundPod
from scheduler.core.explain.model import Explanation
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.core.explained_cluster import explained

EXAMPLE = Path(__file__).parents[2] / "examples" / "explain" / "pending-pod.yaml"

# `full` has exactly the room the bound pod takes; `tainted` was tainted after it bound there.
CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: full}
status: {allocatable: {cpu: '2', memory: 1Gi, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: tainted}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {allocatable: {cpu: '4', memory: 1Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: default}
spec:
  nodeName: NODE
  containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]
status: {phase: Running}
"""


async def _on(node: str) -> tuple[Explanation, str]:
    return await explained(CLUSTER.replace("NODE", node), "default", "api")


async def test_the_pod_does_not_count_against_the_node_it_is_on() -> None:
    # Counted on `full` as well as asking for room there, it would not fit anywhere.
    explanation, text = await _on("full")
    assert explanation.bound_to == "full"
    assert explanation.outcome == "Schedulable" and explanation.chosen_node == "full"
    assert explanation.node("full").feasible
    assert explanation.reported is None and explanation.to_json()["boundTo"] == "full"
    assert "It is bound to full: explained as if it were pending now" in text
    assert "The scheduler would choose full (where it is)." in text


async def test_a_pod_that_would_not_go_where_it_is_now_says_why() -> None:
    explanation, text = await _on("tainted")
    assert explanation.bound_to == "tainted"
    assert explanation.chosen_node == "full"
    verdict = explanation.node("tainted").verdict
    assert (verdict.plugin, verdict.reasons) == (
        "TaintToleration",
        ("node(s) had untolerated taint(s)",),
    )
    assert "The scheduler would choose full." in text


def test_a_bound_pod_of_a_scenario_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "default/batch-a", "--scenario", str(EXAMPLE), "-o", "json"]) == 0
    explanation = json.loads(capsys.readouterr().out)
    assert explanation["boundTo"] == "node-a" and explanation["outcome"] == "Schedulable"


async def test_every_read_of_the_pod_is_unbound_and_others_are_untouched() -> None:
    sim = SimCluster(clock=FakeClock())
    await sim.create("nodes", make_node("n").dict())
    await sim.create("pods", make_pod("other").node("n").dict())
    mark = str(sim.revision)
    await sim.create("pods", make_pod("api").dict())
    await sim.bind(Pod.from_dict(await sim.get("pods", "default", "api")), "n")
    unbound = UnboundPod("default", "api")
    view = ReadOnlyCluster(sim, "read-only", unbound)
    listed = {p["metadata"]["name"]: p for p in (await view.list("pods")).items}
    assert "nodeName" not in listed["api"]["spec"] and listed["api"]["status"] == {
        "phase": "Pending"
    }
    assert listed["other"]["spec"]["nodeName"] == "n"
    assert "nodeName" not in (await view.get("pods", "default", "api"))["spec"]
    stream = view.watch("pods", resource_version=mark)
    seen = [await anext(stream) for _ in range(2)]
    await stream.aclose()  # type: ignore[attr-defined]  # an async generator
    assert [e.type for e in seen] == ["ADDED", "MODIFIED"]
    assert all("nodeName" not in e.object["spec"] for e in seen)
    assert unbound.bound_to == "n"
