"""Creating a benchmark workload through the API: namespaces, nodes, setup pods, measured pods.

The shapes themselves live in bench.compare_shapes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from typing import Protocol

from bench.compare_shapes import NAMESPACE
from bench.compare_shapes import SETUP_NAMESPACE
from bench.compare_shapes import WorkloadShape
from tests.e2e.api_client import ApiResponse

CREATE_ATTEMPTS = 5


class Poster(Protocol):
    """Whatever sends one POST: the harness's ApiClient, or bench.compare_poster's."""

    def post(self, path: str, body: Any) -> ApiResponse: ...


class WorkloadError(RuntimeError):
    """An object of the workload could not be created."""


def pods_path(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods"


def create_cluster(
    client: Poster, shape: WorkloadShape, nodes: int, scheduler_name: str, *, threads: int
) -> None:
    """The namespaces, the nodes and the already bound setup pods: all but the measured pods."""
    for name in (NAMESPACE, SETUP_NAMESPACE):
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        create_object(client, "/api/v1/namespaces", namespace)
    create_many(client, "/api/v1/nodes", shape.nodes(nodes), threads)
    setup = shape.setup_pods(nodes, scheduler_name)
    create_many(client, pods_path(SETUP_NAMESPACE), setup, threads)


def create_workload(
    client: Poster,
    shape: WorkloadShape,
    nodes: int,
    pods: int,
    scheduler_name: str,
    *,
    threads: int,
) -> float:
    """The whole workload, measured pods last; returns the seconds it took."""
    started = time.monotonic()
    create_cluster(client, shape, nodes, scheduler_name, threads=threads)
    manifests = [shape.measured_pod(i, scheduler_name) for i in range(pods)]
    create_many(client, pods_path(NAMESPACE), manifests, threads)
    return time.monotonic() - started


def create_many(client: Poster, path: str, objects: list[dict[str, Any]], threads: int) -> None:
    def create(obj: dict[str, Any]) -> None:
        create_object(client, path, obj)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        # list() re-raises the first failure here instead of losing it in a future.
        list(pool.map(create, objects))


def create_object(client: Poster, path: str, obj: dict[str, Any]) -> None:
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
