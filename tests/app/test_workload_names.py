"""Generated pod names stay unique however many a controller makes (five random characters
collide by the thousands), and the same seed gives the same names."""

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
