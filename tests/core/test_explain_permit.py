"""`explain` goes past the choice of a node as the scheduling cycle does: Reserve, Permit, and
for a pod Permit holds, the pods it brought forward, so a gang member whose sibling fits
nowhere is reported as the scheduler will report it, not as Schedulable."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from scheduler.app.cli import main
from scheduler.app.configuration import plugin_registry
from scheduler.app.explain.render import write
from scheduler.app.scenario import ordered_for_loading
from scheduler.app.scenario import parse_documents
from scheduler.cluster.sim import SimCluster
from scheduler.config import load_config_dict
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.model import Verdict
from scheduler.core.explain.session import explain_in
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import FakeClock

COSCHEDULING_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {enabled: [{name: Coscheduling}]}
    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: '*'}]}
"""

NODES = """
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
"""


def _gang(*, selector_on_last: bool) -> str:
    """PodGroup trainers (minMember 3) and its three members; the last one, if told, selects
    a label no node has, so it fits nowhere."""
    docs = [
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
        "metadata: {name: trainers, namespace: default}\nspec: {minMember: 3}\n"
    ]
    for i in range(3):
        selector = "  nodeSelector: {gpu: 'true'}\n" if selector_on_last and i == 2 else ""
        docs.append(
            "apiVersion: v1\nkind: Pod\nmetadata:\n"
            f"  name: trainer-{i}\n  namespace: default\n"
            "  labels: {scheduling.x-k8s.io/pod-group: trainers}\n"
            f"spec:\n{selector}"
            "  containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]\n"
        )
    return "---\n".join(docs)


def _scenario(tmp_path: Path, config: str, *parts: str) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([config, NODES, *parts]))
    return path


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(argv) == 0
    return dict(json.loads(capsys.readouterr().out))


def _simulated(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    result = _cli(["simulate", str(path), "--output", "json", "--no-progress"], capsys)
    return {p["name"]: p for p in result["pods"]}


def test_a_member_whose_sibling_fits_nowhere_is_reported_as_simulate_leaves_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(tmp_path, COSCHEDULING_CONFIG, _gang(selector_on_last=True))
    simulated = _simulated(path, capsys)
    explained = _cli(["explain", "trainer-0", "--scenario", str(path), "-o", "json"], capsys)
    # Every Filter passes, yet the pod stays pending with the scheduler's own text.
    assert all(node["feasible"] for node in explained["nodes"])
    assert explained["outcome"] == simulated["trainer-0"]["status"] == "Unschedulable"
    assert explained["message"] == simulated["trainer-0"]["message"]
    assert "optimistic rejection in PostFilter" in explained["message"]
    permit = explained["permit"]
    assert permit["node"] == explained["chosenNode"] and permit["result"] == "Rejected"
    [answer] = permit["plugins"]
    assert answer["plugin"] == "Coscheduling" and answer["code"] == "Wait"
    assert answer["timeoutSeconds"] == 60.0
    assert answer["reasons"] == [
        "waiting for 2 more member(s) of PodGroup default/trainers: 1 of minMember 3 placed"
    ]
    # The siblings, each as the simulation leaves it: the one placed beside the pod is
    # turned away with the group, the one that fits nowhere says why.
    companions = {c["pod"]: c for c in permit["companions"]}
    assert list(companions) == ["default/trainer-1", "default/trainer-2"]
    for name in ("trainer-1", "trainer-2"):
        companion = companions[f"default/{name}"]
        assert companion["outcome"] == simulated[name]["status"] == "Unschedulable"
        assert companion["message"] == simulated[name]["message"]
    assert companions["default/trainer-1"]["node"] in {"node-a", "node-b"}
    assert companions["default/trainer-2"]["node"] == ""


def test_a_wait_nothing_ends_is_waiting_with_the_text_its_timeout_brings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # At 50% one missing member of three keeps the others waiting rather than rejecting them.
    config = COSCHEDULING_CONFIG + (
        "  pluginConfig:\n  - name: Coscheduling\n"
        "    args: {podGroupRejectPercentage: 50, permitWaitingTimeSeconds: 30}\n"
    )
    path = _scenario(tmp_path, config, _gang(selector_on_last=True))
    simulated = _simulated(path, capsys)
    assert simulated["trainer-0"]["status"] == "Waiting"
    explained = _cli(["explain", "trainer-0", "--scenario", str(path), "-o", "json"], capsys)
    assert explained["outcome"] == "Waiting"
    assert explained["message"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin "
        "Coscheduling."
    )
    permit = explained["permit"]
    assert permit["result"] == "TimesOut"
    assert [c["outcome"] for c in permit["companions"]] == ["Waiting", "Unschedulable"]


def _load(text: str) -> SimCluster:
    # The cluster as it stands, not simulated first: every member is still pending.
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(parse_documents(text, "cluster").objects))
    return sim


async def _explain(sim: SimCluster, name: str, config: dict[str, Any]) -> Explanation:
    registry = dict(plugin_registry([]))
    registry["Refuser"] = PluginSpec("Refuser", Refuser)
    loaded, profiles = load_config_dict(config, registry)
    return await explain_in(sim, "default", name, loaded, profiles, registry)


def _config(plugins: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
    }


async def test_a_gang_that_fits_is_allowed_and_nothing_is_written() -> None:
    sim = _load(NODES + "---\n" + _gang(selector_on_last=False))
    revision, events = sim.revision, len(sim.events())
    config = _config(
        {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        }
    )
    explanation = await _explain(sim, "trainer-0", config)
    assert (sim.revision, len(sim.events())) == (revision, events)
    assert explanation.outcome == "Schedulable" and explanation.message == ""
    permit = explanation.permit
    assert permit is not None and permit.result == "Allowed"
    assert [p.code for p in permit.plugins] == ["Wait"]
    # The third member reaches the quorum and lets the second go too.
    assert [(c.pod, c.outcome) for c in permit.companions] == [
        ("default/trainer-1", "Schedulable"),
        ("default/trainer-2", "Schedulable"),
    ]
    out = io.StringIO()
    write(explanation, "table", out)
    text = out.getvalue()
    assert "Permit at " in text and "Coscheduling: Wait (waiting for 2 more member(s)" in text
    assert "default/trainer-2: Schedulable on node-" in text
    assert "The wait ends: every plugin allows it; binding follows." in text


class Refuser:
    """Turns every pod away at the extension point its test enables it at."""

    name = "Refuser"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status.unschedulable("no room in the ledger")

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return Status.unschedulable("not on my watch"), 0.0


LONE_POD = """
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: default}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]
"""


@pytest.mark.parametrize(
    ("point", "reason", "result"),
    [("reserve", "no room in the ledger", "NotReached"), ("permit", "not on my watch", "Rejected")],
)
async def test_a_rejection_after_the_node_is_chosen_is_the_outcome(
    point: str, reason: str, result: str
) -> None:
    sim = _load(NODES + "---\n" + LONE_POD)
    explanation = await _explain(sim, "api", _config({point: {"enabled": [{"name": "Refuser"}]}}))
    assert explanation.outcome == "Unschedulable"
    # As the scheduler words a failure at the chosen node.
    assert explanation.message == f"0/1 nodes are available: 1 {reason}."
    permit = explanation.permit
    assert permit is not None and permit.result == result
    refused = permit.reserve if point == "reserve" else permit.plugins[0]
    assert refused is not None
    assert refused == Verdict("Refuser", "Unschedulable", (reason,))
    out = io.StringIO()
    write(explanation, "table", out)
    place = "Reserve" if point == "reserve" else "Permit"
    assert f"{place} at {permit.node}: Refuser: Unschedulable ({reason})" in out.getvalue()


async def test_a_pod_no_permit_plugin_holds_shows_no_permit_lines() -> None:
    sim = _load(NODES + "---\n" + LONE_POD)
    explanation = await _explain(sim, "api", _config({}))
    assert explanation.outcome == "Schedulable"
    permit = explanation.permit
    assert permit is not None and (permit.result, permit.plugins) == ("Allowed", [])
    out = io.StringIO()
    write(explanation, "table", out)
    assert "Permit at" not in out.getvalue()
