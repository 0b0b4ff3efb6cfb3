"""One ResourceClaim shared across the two schedulers on one real apiserver: the claim either
of them allocates, the other reserves for a pod of its own, and both pods are bound to the
claim's node.

kube-scheduler v1.36 stamps `allocationTimestamp` on a claim it reserves if the allocation
lacks it, a write the server refuses (the allocation is immutable): a claim we allocated
without the stamp would leave its pod failing PreBind on every attempt.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from bench.compare_schedulers import KINDS
from bench.compare_schedulers import SchedulerKind
from scheduler.testing import make_node
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from tests.differential.placement import POLL_S
from tests.differential.placement import RESOURCE_API
from tests.differential.runner import running
from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries

pytestmark = pytest.mark.e2e

DRIVER = "shared.example.com"
BIND_TIMEOUT_S = 30.0


def _created(client: ApiClient, path: str, body: dict[str, Any]) -> None:
    answer = client.post(path, body)
    assert answer.status == 201, answer


def _node(name: str) -> dict[str, Any]:
    node = make_node(name).dict()
    del node["metadata"]["uid"]  # the server gives it
    return node


def _claim_pod(name: str, scheduler: SchedulerKind) -> dict[str, Any]:
    container = {"name": "main", "image": "registry.example/app", "resources": {}}
    container["resources"] = {"requests": {"cpu": "100m"}, "claims": [{"name": "dev"}]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler.scheduler_name,
            "containers": [container],
            "resourceClaims": [{"name": "dev", "resourceClaimName": "shared"}],
        },
    }


def _bound_node(client: ApiClient, namespace: str, name: str) -> str:
    deadline = time.monotonic() + BIND_TIMEOUT_S
    while time.monotonic() < deadline:
        pod = client.get(f"/api/v1/namespaces/{namespace}/pods/{name}").body
        if node := (pod.get("spec") or {}).get("nodeName"):
            return str(node)
        time.sleep(POLL_S)
    events = client.get(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events").body
    notes = [e.get("note") for e in events.get("items") or () if e["regarding"]["name"] == name]
    raise AssertionError(f"{namespace}/{name} was not bound: {notes}")


def test_a_claim_one_scheduler_allocated_is_shared_by_the_other(
    e2e_binaries: ControlPlaneBinaries, tmp_path: Path
) -> None:
    with running(e2e_binaries, tmp_path) as (client, _):
        for first in KINDS:
            second = next(kind for kind in KINDS if kind != first)
            _share(client, first, second, f"{first.label}-allocates")


def _share(client: ApiClient, first: SchedulerKind, second: SchedulerKind, tag: str) -> None:
    """`first` schedules a pod with a fresh claim, `second` one more pod with the same claim;
    only the node `tag`-left has devices."""
    namespace, device_class, left = f"shared-{tag}", f"gpu-{tag}", f"{tag}-left"
    _created(client, "/api/v1/namespaces", {"metadata": {"name": namespace}})
    selector = f'device.driver == "{DRIVER}"'
    _created(client, f"{RESOURCE_API}/deviceclasses", make_device_class(device_class, selector))
    for node in (left, f"{tag}-right"):
        _created(client, "/api/v1/nodes", _node(node))
    gpus = [device("gpu-0"), device("gpu-1")]
    _created(client, f"{RESOURCE_API}/resourceslices", make_slice(left, DRIVER, gpus, node=left))
    claim = make_claim("shared", namespace).request("gpu", device_class).dict()
    for field in ("uid", "resourceVersion"):
        del claim["metadata"][field]
    _created(client, f"{RESOURCE_API}/namespaces/{namespace}/resourceclaims", claim)

    _created(client, f"/api/v1/namespaces/{namespace}/pods", _claim_pod("a", first))
    assert _bound_node(client, namespace, "a") == left
    _created(client, f"/api/v1/namespaces/{namespace}/pods", _claim_pod("b", second))
    assert _bound_node(client, namespace, "b") == left

    status = client.get(f"{RESOURCE_API}/namespaces/{namespace}/resourceclaims/shared").body[
        "status"
    ]
    assert [r["name"] for r in status["reservedFor"]] == ["a", "b"]
    [result] = status["allocation"]["devices"]["results"]
    assert result["pool"] == left
    # Whichever scheduler allocated, the allocation carries its time.
    assert status["allocation"]["allocationTimestamp"]
