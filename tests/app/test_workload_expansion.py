"""Workload expansion on its own: generated pod names stay unique however many a controller
makes (five random characters collide by the thousands), the same seed gives the same names,
and what a scenario already holds for a controller is not made again."""

from __future__ import annotations

import random
from typing import Any

from scheduler.app.workloads import expand_workloads


def _replica_set(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "big"},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c"}]}}},
    }


def _pod_names(objects: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["name"] for o in objects if o["kind"] == "Pod"]


def test_twenty_thousand_replicas_get_distinct_names() -> None:
    names = _pod_names(expand_workloads([_replica_set(20_000)], random.Random(0)))
    assert len(names) == len(set(names)) == 20_000


def test_a_name_the_scenario_holds_is_not_generated_again() -> None:
    first = _pod_names(expand_workloads([_replica_set(1)], random.Random(5)))[0]
    taken = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": first}, "spec": {}}
    again = _pod_names(expand_workloads([taken, _replica_set(1)], random.Random(5)))
    assert again[0] == first and again[1] != first


def test_the_same_seed_gives_the_same_names() -> None:
    runs = [_pod_names(expand_workloads([_replica_set(50)], random.Random(9))) for _ in range(2)]
    assert runs[0] == runs[1]


def test_a_dumped_deployment_with_its_replica_set_and_pods_adds_nothing() -> None:
    """What `kubectl get -o yaml` gives for a running Deployment is already expanded."""
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "uid": "d-uid"},
        "spec": {"replicas": 2, "template": template},
    }

    def owned(kind: str, name: str, by_kind: str, by_name: str) -> dict[str, Any]:
        ref = {"apiVersion": "apps/v1", "kind": by_kind, "name": by_name, "controller": True}
        obj: dict[str, Any] = {
            "apiVersion": "v1" if kind == "Pod" else "apps/v1",
            "kind": kind,
            "metadata": {"name": name, "ownerReferences": [ref]},
            "spec": template["spec"] if kind == "Pod" else {"replicas": 2, "template": template},
        }
        return obj

    objects = [
        deployment,
        owned("ReplicaSet", "web-abc", "Deployment", "web"),
        owned("Pod", "web-abc-1", "ReplicaSet", "web-abc"),
        owned("Pod", "web-abc-2", "ReplicaSet", "web-abc"),
    ]
    expanded = expand_workloads(objects, random.Random(1))
    assert [(o["kind"], o["metadata"]["name"]) for o in expanded] == [
        (o["kind"], o["metadata"]["name"]) for o in objects
    ]
