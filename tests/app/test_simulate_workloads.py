"""`simulate` on workload objects: each expands into the pods (and claims) its controller makes,
named, labelled and owned as that controller does it, and the scheduler places them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.app.cli import main
from scheduler.testing import make_node
from scheduler.testing.storage_builders import make_storage_class

SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]"
VOLUME_PLUGINS = ["plugins.volume_binding:SPEC", "plugins.volume_restrictions:SPEC"]


def _template(app: str, cpu: str = "100m") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {
            "containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": cpu}}}]
        },
    }


def _workload(api_version: str, kind: str, name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "spec": spec}


def _replicated(kind: str, app: str, replicas: int) -> dict[str, Any]:
    """A Deployment or ReplicaSet named after its app, selecting the pods of its template."""
    return _workload(
        "apps/v1",
        kind,
        app,
        replicas=replicas,
        selector={"matchLabels": {"app": app}},
        template=_template(app),
    )


def _nodes(count: int = 5) -> list[dict[str, Any]]:
    return [
        make_node(f"node-{i}").capacity(cpu="4", memory="16Gi", pods=110).dict()
        for i in range(count)
    ]


def _simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], objects: list[dict[str, Any]], *flags: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The JSON report and the final cluster (from --output yaml) of one seeded run."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump_all(objects))
    argv = ["simulate", str(scenario), "--no-progress", "--seed", "7", *flags]
    assert main([*argv, "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert main([*argv, "--output", "yaml"]) == 0
    cluster = [o for o in yaml.safe_load_all(capsys.readouterr().out) if o]
    return report, cluster


def _of_kind(cluster: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in cluster if o["kind"] == kind]


def _controller(obj: dict[str, Any]) -> dict[str, Any]:
    (ref,) = [r for r in obj["metadata"]["ownerReferences"] if r["controller"]]
    assert isinstance(ref, dict)
    return ref


def test_deployment_of_six_makes_one_replica_set_and_six_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deployment = _replicated("Deployment", "web", 6)
    report, cluster = _simulate(tmp_path, capsys, [*_nodes(), deployment])
    (replica_set,) = _of_kind(cluster, "ReplicaSet")
    (stored_deployment,) = _of_kind(cluster, "Deployment")
    hashed = replica_set["metadata"]["labels"]["pod-template-hash"]
    assert re.fullmatch(f"{SUFFIX}+", hashed)
    assert replica_set["metadata"]["name"] == f"web-{hashed}"
    assert _controller(replica_set)["uid"] == stored_deployment["metadata"]["uid"]
    assert replica_set["spec"]["selector"]["matchLabels"] == {
        "app": "web",
        "pod-template-hash": hashed,
    }
    assert replica_set["spec"]["replicas"] == 6
    pods = _of_kind(cluster, "Pod")
    assert len(pods) == 6
    for pod in pods:
        assert re.fullmatch(f"web-{hashed}-{SUFFIX}{{5}}", pod["metadata"]["name"])
        assert pod["metadata"]["labels"] == {"app": "web", "pod-template-hash": hashed}
        assert _controller(pod) | {"uid": ""} == {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": f"web-{hashed}",
            "uid": "",
            "controller": True,
            "blockOwnerDeletion": True,
        }
        assert _controller(pod)["uid"] == replica_set["metadata"]["uid"]
        assert pod["spec"]["nodeName"].startswith("node-")
    assert report["summary"]["pods"] == report["summary"]["scheduled"] == 6


def test_statefulset_of_three_gets_ordinal_pods_and_a_claim_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = _template("db")
    template["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]  # replaced by the claim
    statefulset = _workload(
        "apps/v1",
        "StatefulSet",
        "db",
        replicas=3,
        serviceName="db-headless",
        selector={"matchLabels": {"app": "db"}},
        template=template,
        volumeClaimTemplates=[
            {
                "metadata": {"name": "data", "labels": {"tier": "storage"}},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "fast",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ],
    )
    storage = make_storage_class("fast").wait_for_first_consumer().dict()
    plugins = [flag for spec in VOLUME_PLUGINS for flag in ("--plugin", spec)]
    report, cluster = _simulate(tmp_path, capsys, [*_nodes(), storage, statefulset], *plugins)
    pods = {p["metadata"]["name"]: p for p in _of_kind(cluster, "Pod")}
    assert sorted(pods) == ["db-0", "db-1", "db-2"]
    claims = {c["metadata"]["name"]: c for c in _of_kind(cluster, "PersistentVolumeClaim")}
    assert sorted(claims) == ["data-db-0", "data-db-1", "data-db-2"]
    (stored,) = _of_kind(cluster, "StatefulSet")
    for ordinal in range(3):
        pod = pods[f"db-{ordinal}"]
        labels = pod["metadata"]["labels"]
        assert labels["statefulset.kubernetes.io/pod-name"] == f"db-{ordinal}"
        assert labels["apps.kubernetes.io/pod-index"] == str(ordinal)
        assert labels["controller-revision-hash"].startswith("db-")
        assert pod["spec"]["hostname"] == f"db-{ordinal}"
        assert pod["spec"]["subdomain"] == "db-headless"
        assert pod["spec"]["volumes"] == [
            {"name": "data", "persistentVolumeClaim": {"claimName": f"data-db-{ordinal}"}}
        ]
        assert _controller(pod)["uid"] == stored["metadata"]["uid"]
        claim = claims[f"data-db-{ordinal}"]
        assert claim["metadata"]["labels"] == {"tier": "storage", "app": "db"}
        # The default retention policy keeps claims: they are owned by nothing.
        assert "ownerReferences" not in claim["metadata"]
        # The simulated provisioner bound each claim where its pod went.
        assert claim["status"]["phase"] == "Bound"
        assert pod["spec"]["nodeName"]
    assert report["summary"]["scheduled"] == 3


def test_indexed_job_runs_parallelism_pods_with_their_indexes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = _template("train")
    template["spec"]["restartPolicy"] = "Never"
    indexed = _workload(
        "batch/v1",
        "Job",
        "train",
        parallelism=4,
        completions=10,
        completionMode="Indexed",
        template=template,
    )
    plain = _workload("batch/v1", "Job", "once", parallelism=4, completions=2, template=template)
    _, cluster = _simulate(tmp_path, capsys, [*_nodes(), indexed, plain])
    jobs = {j["metadata"]["name"]: j for j in _of_kind(cluster, "Job")}
    pods = _of_kind(cluster, "Pod")
    train = [p for p in pods if _controller(p)["name"] == "train"]
    assert len(train) == 4, "parallelism bounds the pods running at once"
    indexes = []
    for pod in train:
        meta = pod["metadata"]
        index = meta["annotations"]["batch.kubernetes.io/job-completion-index"]
        assert meta["labels"]["batch.kubernetes.io/job-completion-index"] == index
        assert re.fullmatch(f"train-{index}-{SUFFIX}{{5}}", meta["name"])
        assert pod["spec"]["hostname"] == f"train-{index}"
        assert meta["labels"]["batch.kubernetes.io/job-name"] == "train"
        assert (
            meta["labels"]["batch.kubernetes.io/controller-uid"] == jobs["train"]["metadata"]["uid"]
        )
        assert meta["finalizers"] == ["batch.kubernetes.io/job-tracking"]
        assert _controller(pod)["kind"] == "Job"
        assert pod["spec"]["nodeName"]
        indexes.append(int(index))
    assert sorted(indexes) == [0, 1, 2, 3]
    once = [p for p in pods if _controller(p)["name"] == "once"]
    assert len(once) == 2, "no more pods than completions still needed"
    assert all(re.fullmatch(f"once-{SUFFIX}{{5}}", p["metadata"]["name"]) for p in once)


def test_daemonset_puts_one_pod_on_each_eligible_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = _nodes(5)
    nodes[3] = make_node("node-3").capacity(cpu="4", memory="16Gi", pods=110).unschedulable().dict()
    nodes[4] = (
        make_node("node-4")
        .capacity(cpu="4", memory="16Gi", pods=110)
        .taint("dedicated", "gpu")
        .dict()
    )
    daemonset = _workload(
        "apps/v1",
        "DaemonSet",
        "agent",
        selector={"matchLabels": {"app": "agent"}},
        template=_template("agent"),
    )
    report, cluster = _simulate(tmp_path, capsys, [*nodes, daemonset])
    pods = _of_kind(cluster, "Pod")
    # A cordoned node still runs its daemon (the controller tolerates unschedulable); a taint
    # the template does not tolerate keeps it off node-4.
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-0", "node-1", "node-2", "node-3"]
    for pod in pods:
        node = pod["spec"]["nodeName"]
        assert re.fullmatch(f"agent-{SUFFIX}{{5}}", pod["metadata"]["name"])
        assert pod["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ] == {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        }
        tolerated = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
        assert ("node.kubernetes.io/unschedulable", "NoSchedule") in tolerated
        assert ("node.kubernetes.io/not-ready", "NoExecute") in tolerated
        assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
        assert _controller(pod)["kind"] == "DaemonSet"
    assert report["summary"]["scheduled"] == report["summary"]["pods"] == 4


def test_pods_a_scenario_already_has_count_toward_the_controller(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replica_set = _replicated("ReplicaSet", "cache", 3)
    replica_set["metadata"]["uid"] = "rs-uid"
    existing = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "cache-old",
            "labels": {"app": "cache"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "cache",
                    "uid": "rs-uid",
                    "controller": True,
                }
            ],
        },
        "spec": _template("cache")["spec"],
    }
    _, cluster = _simulate(tmp_path, capsys, [*_nodes(2), replica_set, existing])
    names = sorted(p["metadata"]["name"] for p in _of_kind(cluster, "Pod"))
    assert len(names) == 3 and "cache-old" in names


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            _workload("batch/v1", "CronJob", "nightly", schedule="@daily"),
            "CronJob default/nightly: not simulated: it creates Jobs on a schedule",
        ),
        (
            _workload(
                "batch/v1", "Job", "odd", completionMode="Sometimes", template=_template("x")
            ),
            "Job default/odd: spec.completionMode: unsupported value 'Sometimes'",
        ),
        (
            _workload("apps/v1", "Deployment", "bare", replicas=2),
            "Deployment default/bare: spec.template.spec: Required value",
        ),
        (
            _workload("apps/v1", "StatefulSet", "neg", replicas=-1, template=_template("x")),
            "StatefulSet default/neg: spec.replicas: must be a non-negative integer, got -1",
        ),
        (
            # Found when the scenario is read, not in the pods the run could not parse.
            _workload(
                "apps/v1",
                "Deployment",
                "odd",
                replicas=1,
                template={"spec": {**_template("x")["spec"], "affinity": True}},
            ),
            "Deployment default/odd: spec.template.spec.affinity: must be an object",
        ),
        (
            _workload(
                "batch/v1",
                "Job",
                "odd",
                template={"spec": {**_template("x")["spec"], "tolerations": [True]}},
            ),
            "Job default/odd: spec.template.spec.tolerations[0]: must be an object",
        ),
    ],
)
def test_a_workload_that_cannot_be_expanded_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], obj: dict[str, Any], expected: str
) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump_all([*_nodes(1), obj]))
    assert main(["simulate", str(scenario), "--no-progress"]) == 2
    assert expected in capsys.readouterr().err
