"""The SchedulingBasic workload of the side-by-side benchmark, created through the API.

Nodes carry their status at creation (there are no kubelets), the way scheduler_perf's
node-default template does; pods are scheduler_perf's pod-default: one pause container with
requests = limits = 100m CPU / 500Mi.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.e2e.api_client import ApiClient

NAMESPACE = "sched-bench"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
CREATE_ATTEMPTS = 5


class WorkloadError(RuntimeError):
    """An object of the workload could not be created."""


def node_manifest(index: int) -> dict[str, Any]:
    name = f"bench-node-{index:05d}"
    capacity = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "phase": "Running",
        },
    }


def pod_manifest(index: int, scheduler_name: str) -> dict[str, Any]:
    resources = {"cpu": "100m", "memory": "500Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{index:06d}", "namespace": NAMESPACE},
        "spec": {
            "schedulerName": scheduler_name,
            "containers": [
                {
                    "name": "pause",
                    "image": PAUSE_IMAGE,
                    "ports": [{"containerPort": 80}],
                    "resources": {"requests": dict(resources), "limits": dict(resources)},
                }
            ],
        },
    }


def create_workload(
    client: ApiClient, nodes: int, pods: int, scheduler_name: str, *, threads: int
) -> float:
    """Creates the namespace, then all nodes, then all pods; returns the seconds it took."""
    started = time.monotonic()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    _create(client, "/api/v1/namespaces", namespace)
    _create_many(client, "/api/v1/nodes", [node_manifest(i) for i in range(nodes)], threads)
    pod_path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    manifests = [pod_manifest(i, scheduler_name) for i in range(pods)]
    _create_many(client, pod_path, manifests, threads)
    return time.monotonic() - started


def _create_many(client: ApiClient, path: str, objects: list[dict[str, Any]], threads: int) -> None:
    def create(obj: dict[str, Any]) -> None:
        _create(client, path, obj)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        # list() re-raises the first failure here instead of losing it in a future.
        list(pool.map(create, objects))


def _create(client: ApiClient, path: str, obj: dict[str, Any]) -> None:
    """POSTs one object; retries throttling and transient errors, accepts 409 (a retry whose
    first attempt did land)."""
    last: object = None
    for attempt in range(CREATE_ATTEMPTS):
        try:
            answer = client.post(path, obj)
        except OSError as err:
            last = err
        else:
            if answer.status in {201, 409}:
                return
            last = answer
            if answer.status not in {429, 500, 503, 504}:
                break
        _backoff(attempt)
    name = obj["metadata"]["name"]
    raise WorkloadError(f"creating {obj['kind']} {name} at {path} failed: {last}")


def _backoff(attempt: int, sleep: Callable[[float], None] = time.sleep) -> None:
    sleep(0.2 * (2**attempt))
