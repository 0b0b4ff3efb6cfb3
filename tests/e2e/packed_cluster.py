"""A cluster packed to the brim: N identical nodes that each fit exactly K identical pods.

With as many pods as the nodes hold in total, any node the schedulers overcommit leaves some
other pod with nowhere to go, and the final pod list shows the overcommit directly: a node with
more than K pods or more cpu requested than it has.

Nodes carry their status at creation (no kubelet runs); pods are one pause container requesting
cpu only. Creation retries what a busy or restarting server refuses, until a deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from scheduler.objects.resources import pod_requests
from tests.e2e.api_client import ApiClient

Object = dict[str, Any]
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
RETRIED_STATUSES = {429, 500, 502, 503, 504}
CREATE_DEADLINE_S = 120.0
RETRY_PAUSE_S = 0.5


@dataclass(frozen=True)
class PackedShape:
    nodes: int = 200
    pods_per_node: int = 12
    pod_cpu_millis: int = 200

    def __post_init__(self) -> None:
        for field in ("nodes", "pods_per_node", "pod_cpu_millis"):
            if getattr(self, field) < 1:
                raise ValueError(f"{field}: {getattr(self, field)} must be at least 1")

    @property
    def pods(self) -> int:
        return self.nodes * self.pods_per_node

    @property
    def node_cpu_millis(self) -> int:
        return self.pods_per_node * self.pod_cpu_millis

    def node_manifest(self, index: int) -> Object:
        name = f"packed-node-{index:04d}"
        capacity = {
            "cpu": f"{self.node_cpu_millis}m",
            "memory": "64Gi",
            "pods": str(self.pods_per_node),
        }
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {
                "capacity": capacity,
                "allocatable": dict(capacity),
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            },
        }

    def pod_manifest(self, index: int, namespace: str, scheduler_name: str) -> Object:
        requests = {"cpu": f"{self.pod_cpu_millis}m"}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"pod-{index:05d}", "namespace": namespace},
            "spec": {
                "schedulerName": scheduler_name,
                "containers": [
                    {"name": "pause", "image": PAUSE_IMAGE, "resources": {"requests": requests}}
                ],
            },
        }


def create_all(admin: ApiClient, path: str, objects: list[Object], *, threads: int = 16) -> None:
    """POSTs every object; a 409 counts as done (an earlier attempt that landed)."""

    def create(obj: Object) -> None:
        deadline = time.monotonic() + CREATE_DEADLINE_S
        last: object = None
        while time.monotonic() < deadline:
            try:
                answer = admin.post(path, obj)
            except OSError as err:  # the server restarting, say
                last = err
            else:
                if answer.status in {201, 409}:
                    return
                last = answer
                if answer.status not in RETRIED_STATUSES:
                    break
            time.sleep(RETRY_PAUSE_S)  # a pause between retries, not a synchronisation
        raise RuntimeError(f"creating {obj['kind']} {obj['metadata']['name']}: {last}")

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(create, objects))


@dataclass(frozen=True)
class Overcommit:
    node: str
    pods: int
    cpu_millis: int


def overcommitted(shape: PackedShape, pods: Iterable[Mapping[str, Any]]) -> list[Overcommit]:
    """The nodes whose bound pods exceed the pod count or the cpu the shape gives a node."""
    count: dict[str, int] = {}
    cpu: dict[str, int] = {}
    for pod in pods:
        spec = pod.get("spec") or {}
        node = spec.get("nodeName")
        if not node:
            continue
        count[node] = count.get(node, 0) + 1
        cpu[node] = cpu.get(node, 0) + pod_requests(spec).get("cpu", 0)
    return [
        Overcommit(node, count[node], cpu[node])
        for node in sorted(count)
        if count[node] > shape.pods_per_node or cpu[node] > shape.node_cpu_millis
    ]


def bound_names(pods: Iterable[Mapping[str, Any]]) -> set[str]:
    return {str(p["metadata"]["name"]) for p in pods if (p.get("spec") or {}).get("nodeName")}


def occurrences(events: Iterable[Mapping[str, Any]], reason: str) -> dict[str, int]:
    """Pod name -> how often a `reason` event was reported for it (a series counts each)."""
    seen: dict[str, int] = {}
    for event in events:
        if event.get("reason") != reason:
            continue
        pod = str((event.get("regarding") or {}).get("name"))
        series = event.get("series") or {}
        seen[pod] = seen.get(pod, 0) + max(1, int(series.get("count") or 1))
    return seen
