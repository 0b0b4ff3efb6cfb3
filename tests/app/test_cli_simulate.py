"""`kube-pyscheduler simulate`: the bundled scenario, generated clusters and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.app.cli import main
from tests.batching_scenario import NO_SPREADING
from tests.batching_scenario import NODE_CPUS
from tests.batching_scenario import preference_node
from tests.batching_scenario import preferring_pod


def _run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    assert main([*argv, "--output", "json", "--no-progress", "--seed", "3"]) == 0
    return json.loads(capsys.readouterr().out)


def test_bundled_scenario_places_or_explains_every_pod(capsys: pytest.CaptureFixture[str]) -> None:
    result = _run_json(["simulate"], capsys)
    pods = {f"{p['namespace']}/{p['name']}": p for p in result["pods"]}
    assert all(p["node"] or p["message"] for p in pods.values())
    # foo-scheduler's pods only land on nodes labelled scheduler-profile=foo.
    assert {pods[f"analytics/batch-{i}"]["node"] for i in range(4)} <= {"worker-6", "worker-7"}
    assert pods["analytics/trainer"]["node"] == "worker-8"
    assert pods["shop/too-big"]["status"] == "Unschedulable"
    assert pods["shop/too-big"]["message"] == (
        "0/10 nodes are available: 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 8 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/10 nodes are "
        "available: 10 Preemption is not helpful for scheduling."
    )
    assert pods["shop/waiting-for-quota"]["status"] == "Gated"
    assert pods["shop/other-team"]["status"] == "NotHandled"
    assert pods["shop/other-team"]["node"] is None
    web_nodes = [pods[f"shop/web-{i}"]["node"] for i in range(9)]
    placed = [n for n in web_nodes if n]
    assert len(placed) == len(set(placed)) == 8, "required anti-affinity: one web pod per node"
    # The gang is placed whole; the gang short of a member is not tried, and says why.
    assert {pods[f"ml/trainer-{i}"]["status"] for i in range(3)} == {"Scheduled"}
    groups = {f"{g['namespace']}/{g['name']}": g for g in result["groups"]}
    assert groups["ml/trainers"]["status"] == "Scheduled"
    assert groups["ml/eval"]["status"] == "Unschedulable"
    assert (
        "cannot find enough sibling pods, current pods number: 2, minMember of group: 3"
        in groups["ml/eval"]["message"]
    )
    # Four research jobs borrow lab's idle min up to research's max of 2 CPU; the fifth waits.
    assert sum(pods[f"research/job-{i}"]["status"] == "Scheduled" for i in range(5)) == 4
    unplaced = [
        pods[f"research/job-{i}"] for i in range(5) if not pods[f"research/job-{i}"]["node"]
    ]
    assert "ElasticQuota research is more than Max" in unplaced[0]["message"]
    summary = result["summary"]
    assert summary["scheduled"] == 24


def test_bundled_scenario_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Profiles: default-scheduler, quota-scheduler, foo-scheduler" in out
    assert "PodGroups:" in out and "ml/trainers" in out
    assert "shop/too-big" in out and "Insufficient cpu" in out
    assert "worker-cordoned" in out


def test_generated_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    result = _run_json(
        ["simulate", "--nodes", "20", "--pods", "50", "--zones", "2", "--pod-shape", "cpu=1"],
        capsys,
    )
    summary = result["summary"]
    assert summary["scheduled"] == 50
    nodes = result["nodes"]
    assert len(nodes) == 20
    # LeastAllocated spreads 50 one-CPU pods over 20 four-CPU nodes: 2 or 3 per node.
    assert {n["pods"] for n in nodes} <= {2, 3}


def test_generated_gangs_report_each_group(capsys: pytest.CaptureFixture[str]) -> None:
    # Room for 6 one-CPU pods: one gang of 4 fits, the other cannot fit beside it.
    argv = ["simulate", "--nodes", "3", "--node-shape", "cpu=2,pods=110", "--gangs", "2"]
    result = _run_json([*argv, "--gang-size", "4", "--pod-shape", "cpu=1"], capsys)
    groups = sorted(result["groups"], key=lambda g: -g["bound"])
    assert [(g["bound"], g["minMember"], g["pods"]) for g in groups] == [(4, 4, 4), (0, 4, 4)]
    assert groups[0]["status"] == "Scheduled"
    assert groups[1]["status"] in ("Waiting", "Unschedulable")
    assert result["summary"]["scheduled"] == 4


def test_generated_gangs_need_a_gang_scheduling_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "plain.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    argv = ["simulate", "--nodes", "1", "--gangs", "1", "--config", str(config), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--gangs: profile 'default-scheduler' does not enable Coscheduling" in err


def test_generated_pods_beyond_capacity_are_explained(capsys: pytest.CaptureFixture[str]) -> None:
    result = _run_json(
        [
            "simulate",
            "--nodes",
            "2",
            "--pods",
            "10",
            "--node-shape",
            "cpu=2,memory=4Gi,pods=110",
            "--pod-shape",
            "cpu=1",
        ],
        capsys,
    )
    outcomes = [p["status"] for p in result["pods"]]
    assert outcomes.count("Scheduled") == 4
    messages = {p["message"] for p in result["pods"] if p["status"] == "Unschedulable"}
    assert messages == {
        "0/2 nodes are available: 2 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    }


def test_generated_gpu_nodes_and_pods(capsys: pytest.CaptureFixture[str]) -> None:
    result = _run_json(
        ["simulate", "--nodes", "3", "--gpus-per-node", "2", "--pods", "7", "--pod-gpus", "1"],
        capsys,
    )
    outcomes = [p["status"] for p in result["pods"]]
    assert outcomes.count("Scheduled") == 6
    [left] = [p for p in result["pods"] if p["status"] == "Unschedulable"]
    assert left["message"] == (
        "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def test_negative_gpu_counts_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--nodes", "1", "--gpus-per-node", "-1"]) != 0
    assert "--gpus-per-node: must be zero or more" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n"
            "  - {name: c, image: x, resources: {requests: {cpu: lots}}}\n",
            "document 0: Pod default/a: container 'c' resources.requests.cpu",
        ),
        ("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n", "Widget w"),
        ("kind: Pod\nmetadata: {name: a}\n", "apiVersion: Required value"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n", "not valid YAML"),
    ],
    ids=["bad-quantity", "unknown-kind", "no-api-version", "broken-yaml"],
)
def test_bad_input_fails_naming_the_object(
    content: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(content)
    assert main(["simulate", str(scenario), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert expected in err, err


def test_negative_counts_are_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--nodes", "-1"]) == 2
    assert "--nodes" in capsys.readouterr().err


PINNED_TO_A_DELETED_NODE = """\
apiVersion: v1
kind: Node
metadata: {name: a}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: default}
spec:
  containers: [{name: c, image: x}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [deleted-node]}]
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: default}
spec:
  containers: [{name: c, image: x}]
"""


def test_pod_pinned_to_a_missing_node_is_explained_and_the_rest_placed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "pinned.yaml"
    scenario.write_text(PINNED_TO_A_DELETED_NODE)
    result = _run_json(["simulate", str(scenario)], capsys)
    pods = {p["name"]: p for p in result["pods"]}
    assert pods["pinned"]["status"] == "Unschedulable"
    assert pods["pinned"]["message"] == (
        "0/1 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert pods["plain"]["node"] == "a"


def _preferring_scenario(tmp_path: Path) -> tuple[Path, Path]:
    """The scenario of tests/batching_scenario.py as files: (configuration, objects)."""
    profile = {"schedulerName": "default-scheduler", "plugins": NO_SPREADING}
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }
    objects = [preference_node(name, name).dict() for name in NODE_CPUS]
    objects += [preferring_pod(name).dict() for name in ("first", "second")]
    config_file, objects_file = tmp_path / "config.yaml", tmp_path / "scenario.yaml"
    config_file.write_text(yaml.safe_dump(config))
    objects_file.write_text(yaml.safe_dump_all(objects))
    return config_file, objects_file


@pytest.mark.parametrize(
    ("gates", "nodes"), [([], {"a", "c"}), (["OpportunisticBatching=false"], {"a", "b"})]
)
def test_simulate_batches_as_the_gate_says(
    gates: list[str], nodes: set[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, scenario = _preferring_scenario(tmp_path)
    flags = [f"--feature-gates={gate}" for gate in gates]
    result = _run_json(["simulate", str(scenario), f"--config={config}", *flags], capsys)
    assert {pod["node"] for pod in result["pods"]} == nodes


def test_simulate_refuses_a_gate_away_from_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--no-progress", "--feature-gates=GangScheduling=true"]) == 2
    assert "--feature-gates: GangScheduling=true cannot apply" in capsys.readouterr().err


_PORT_AND_CPU_PREEMPTION = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: port-holder, namespace: default}
spec:
  nodeName: n0
  priority: 10
  containers:
  - {name: c, image: x, ports: [{containerPort: 8080, hostPort: 8080}],
     resources: {requests: {cpu: 100m}}}
---
apiVersion: v1
kind: Pod
metadata: {name: cpu-holder, namespace: default}
spec:
  nodeName: n0
  priority: 0
  containers: [{name: c, image: x, resources: {requests: {cpu: 1800m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  priority: 100
  containers:
  - {name: c, image: x, ports: [{containerPort: 8080, hostPort: 8080}],
     resources: {requests: {cpu: 1500m}}}
"""


def test_a_preemptor_held_back_while_its_victims_go_is_retried_when_they_are_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NodePorts turns web away. The port holder's deletion lands at once and requeues web while
    the preemption still runs, so PreEnqueue holds it back; the CPU holder's deletion frees no
    port, so no hint moves web again. The preemption's end must, or web waits for the flush."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(_PORT_AND_CPU_PREEMPTION)
    result = _run_json(["simulate", str(scenario)], capsys)
    pods = {pod["name"]: pod for pod in result["pods"]}
    assert (pods["web"]["status"], pods["web"]["node"]) == ("Scheduled", "n0")
    assert {pods[name]["status"] for name in ("port-holder", "cpu-holder")} == {"Preempted"}
