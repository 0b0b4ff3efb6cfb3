"""`explain --scenario`: the verdicts agree with simulate's FailedScheduling text, and each
suggested fix, applied to the pod, schedules it when the scenario is simulated again."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.app.cli import main
from scheduler.app.configuration import load_effective
from scheduler.app.configuration import plugin_registry
from scheduler.app.explain.render import write
from scheduler.app.scenario import ordered_for_loading
from scheduler.app.scenario import parse_documents
from scheduler.cluster.sim import SimCluster
from scheduler.cluster.sim.merge import merge_patch
from scheduler.core.explain.session import explain_in
from scheduler.testing import FakeClock

EXAMPLE = Path(__file__).parents[2] / "examples" / "explain" / "pending-pod.yaml"


def _explain(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["explain", *argv, "-o", "json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def _simulate(files: list[Path], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    argv = ["simulate", *map(str, files), "--output", "json", "--no-progress", "--seed", "0"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    return {f"{p['namespace']}/{p['name']}": p for p in result["pods"]}


def histogram_of(message: str) -> dict[str, int]:
    """`0/N nodes are available: 1 a, 2 b.` (before any PostFilter text) as {a: 1, b: 2}."""
    match = re.match(r"0/\d+ nodes are available: (.*?)\.(?: |$)", message)
    assert match, message
    counts: dict[str, int] = {}
    for entry in match.group(1).split(", "):
        count, _, reason = entry.partition(" ")
        counts[reason] = int(count)
    return counts


def verdict_histogram(explanation: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in explanation["nodes"]:
        if not node["feasible"]:
            for reason in node["verdict"]["reasons"]:
                counts[reason] = counts.get(reason, 0) + 1
    return counts


def _with_patch(source: Path, pod: str, patch: dict[str, Any], target: Path) -> Path:
    namespace, name = pod.split("/")
    documents = list(yaml.safe_load_all(source.read_text()))
    changed = []
    for doc in documents:
        meta = doc.get("metadata") or {}
        same = doc.get("kind") == "Pod" and meta.get("name") == name
        fixed = same and meta.get("namespace", "default") == namespace
        changed.append(merge_patch(doc, patch) if fixed else doc)
    target.write_text(yaml.safe_dump_all(changed))
    return target


def test_verdicts_agree_with_the_failed_scheduling_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pods = _simulate([EXAMPLE], capsys)
    assert pods["default/web"]["status"] == "Unschedulable"
    explanation = _explain(["default/web", "--scenario", str(EXAMPLE)], capsys)
    assert explanation["outcome"] == "Unschedulable"
    assert explanation["message"] == pods["default/web"]["message"]
    assert (
        verdict_histogram(explanation)
        == histogram_of(pods["default/web"]["message"])
        == {
            "Insufficient cpu": 2,
            "node(s) had untolerated taint(s)": 1,
        }
    )
    nodes = {n["name"]: n for n in explanation["nodes"]}
    assert nodes["node-c"]["verdict"]["plugin"] == "TaintToleration"
    # Every Filter plugin answers on every node: node-c's resources are fine, its taint is not.
    plugins = {v["plugin"]: v for v in nodes["node-c"]["plugins"]}
    assert plugins["NodeResourcesFit"]["code"] == "Success"
    assert plugins["TaintToleration"]["code"] == "UnschedulableAndUnresolvable"
    preemption = next(r for r in explanation["postFilter"] if r["plugin"] == "DefaultPreemption")
    assert preemption["dryRun"] and preemption["candidates"] == []
    assert preemption["message"] in explanation["message"]
    # DynamicResources ran as it is (it cannot plan); it had nothing to deallocate.
    claims = next(r for r in explanation["postFilter"] if r["plugin"] == "DynamicResources")
    assert not claims["dryRun"] and claims["message"] in explanation["message"]
    assert explanation["cancelledActions"] == []


def test_every_fix_schedules_the_pod_when_simulated_again(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    explanation = _explain(["web", "--scenario", str(EXAMPLE)], capsys)
    summaries = [f["summary"] for f in explanation["fixes"]]
    assert summaries == [
        "fits node-b if the cpu request is ≤ 1",
        "fits node-a if the cpu request is ≤ 500m",
        "tolerate dedicated=gpu:NoSchedule to use 1 node(s)",
        "priority 1 lets preemption find room on node-a, node-b (of the nodes it examined): "
        "a PriorityClass of value ≥ 1 for the pod",
    ]
    for i, fix in enumerate(explanation["fixes"]):
        fixed = _with_patch(EXAMPLE, "default/web", fix["patch"], tmp_path / f"fix-{i}.yaml")
        outcome = _simulate([fixed], capsys)["default/web"]
        assert outcome["status"] == "Scheduled", (fix["summary"], outcome)
        assert outcome["node"] in fix["nodes"], (fix["summary"], outcome)


SELECTOR_SCENARIO = """
apiVersion: v1
kind: Node
metadata: {name: hdd-1, labels: {disk: hdd}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: hdd-2, labels: {disk: hdd}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: small, labels: {disk: ssd}}
status: {allocatable: {cpu: 100m, memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: data}
spec:
  nodeSelector: {disk: ssd}
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 500m}}}]
"""


def test_a_node_selector_mismatch_suggests_dropping_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "selector.yaml"
    scenario.write_text(SELECTOR_SCENARIO)
    explanation = _explain(["db", "-n", "data", "--scenario", str(scenario)], capsys)
    fixes = {f["kind"]: f for f in explanation["fixes"]}
    # The ssd node is too small, and only the selector keeps the pod off the others.
    assert fixes["nodeSelector"]["summary"] == (
        "drop nodeSelector disk=ssd to use 2 node(s) (nodes have disk: hdd)"
    )
    assert fixes["nodeSelector"]["nodes"] == ["hdd-1", "hdd-2"]
    assert fixes["resources"]["summary"] == "fits small if the cpu request is ≤ 100m"
    fixed = _with_patch(scenario, "data/db", fixes["nodeSelector"]["patch"], tmp_path / "f.yaml")
    assert _simulate([fixed], capsys)["data/db"]["node"] in {"hdd-1", "hdd-2"}


FITTING_SCENARIO = """
apiVersion: v1
kind: Node
metadata: {name: big, labels: {kubernetes.io/hostname: big}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: busy, labels: {kubernetes.io/hostname: busy}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: hog, namespace: default}
spec:
  nodeName: busy
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "6"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: default}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "1"}}}]
"""


async def test_a_pod_that_fits_gets_every_score_and_nothing_is_written() -> None:
    # A cluster as it stands, not simulated first: the pod is pending but would fit.
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(parse_documents(FITTING_SCENARIO, "fits").objects))
    registry = plugin_registry([])
    config, profiles = load_effective(registry)
    revision, events = sim.revision, len(sim.events())
    explanation = await explain_in(sim, "default", "api", config, profiles, registry)
    assert (sim.revision, len(sim.events())) == (revision, events)
    assert explanation.outcome == "Schedulable" and explanation.message == ""
    assert explanation.fixes == []
    scores = {s.node: s for s in explanation.scores}
    assert set(scores) == {"big", "busy"}
    for score in scores.values():
        assert score.total == sum(p.normalized * p.weight for p in score.plugins)
        assert all(0 <= p.normalized <= 100 for p in score.plugins)
    # LeastAllocated prefers the empty node, and the scheduler picks the best total.
    assert scores["big"].total > scores["busy"].total
    assert explanation.chosen_node == "big"


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["a/b/c", "--scenario", str(EXAMPLE)], "expected NAMESPACE/NAME or NAME"),
        (["default/web", "-n", "x", "--scenario", str(EXAMPLE)], "not both"),
        (["default/nope", "--scenario", str(EXAMPLE)], "pod default/nope not found"),
        (
            ["web", "--scenario", str(EXAMPLE), "--kubeconfig", "k"],
            "--scenario and --kubeconfig",
        ),
    ],
)
def test_bad_input_is_named(
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", *argv]) != 0
    assert error in capsys.readouterr().err


def test_the_table_and_the_wide_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "web", "--scenario", str(EXAMPLE)]) == 0
    table = capsys.readouterr().out
    assert re.search(r"node-c\s+UnschedulableAndUnresolvable\s+TaintToleration\s+node\(s\)", table)
    assert "  - tolerate dedicated=gpu:NoSchedule to use 1 node(s)" in table
    assert "patch:" not in table and "VolumeBinding" not in table
    assert main(["explain", "web", "--scenario", str(EXAMPLE), "-o", "wide"]) == 0
    wide = capsys.readouterr().out
    # Each Filter plugin that ran is a column: node-c passes NodeResourcesFit.
    assert re.search(r"node-c\s+.*TaintToleration.*\s+ok\s*$", wide, re.MULTILINE)
    assert '"tolerations": [{"effect": "NoSchedule"' in wide


async def test_scores_are_rendered_with_the_chosen_node_marked() -> None:
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(parse_documents(FITTING_SCENARIO, "fits").objects))
    registry = plugin_registry([])
    config, profiles = load_effective(registry)
    explanation = await explain_in(sim, "default", "api", config, profiles, registry)
    out = io.StringIO()
    write(explanation, "wide", out)
    text = out.getvalue()
    assert "The scheduler would choose big." in text
    best = explanation.scores[0]
    assert re.search(rf"big \*\s+{best.total}\s", text), text
