"""DeviceTaintRules (`resource.k8s.io/v1beta2`) on a real apiserver, beside kube-scheduler
v1.36.3 with the same DRADeviceTaintRules gate: a rule tainting a driver's GPUs keeps both
schedulers' pods pending with the same FailedScheduling message, and once it is deleted both
bind.

The pinned apiserver serves the resource only with `--runtime-config=resource.k8s.io/v1beta2=
true` and `--feature-gates=DRADeviceTaintRules=true`, so this test runs its own control plane.
Each scheduler has a node and a GPU of its own, so the two never allocate the same device.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_device_taint_rule
from scheduler.testing.dra_builders import make_slice
from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.side_by_side import BIND_TIMEOUT_S
from tests.e2e.side_by_side import EVENT_TIMEOUT_S
from tests.e2e.side_by_side import admin_and_namespace
from tests.e2e.side_by_side import both_schedulers
from tests.e2e.upstream_scheduler import SCHEDULER_NAME as UPSTREAM
from tests.e2e.workload import Workload
from tests.e2e.workload import pod_scheduled_condition
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

GATE = "--feature-gates=DRADeviceTaintRules=true"
PLANE_FLAGS = ("--runtime-config=resource.k8s.io/v1beta2=true", GATE)
RESOURCE_API = "/apis/resource.k8s.io/v1"
RULES = "/apis/resource.k8s.io/v1beta2/devicetaintrules"
FAULTY = {"key": "example.com/faulty", "value": "ecc", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def rules_plane(e2e_binaries: ControlPlaneBinaries) -> Iterator[ControlPlane]:
    with ControlPlane(e2e_binaries, PLANE_FLAGS) as plane:
        yield plane


def _created(admin: ApiClient, path: str, body: dict[str, Any]) -> None:
    created = admin.post(path, body)
    assert created.status == 201, created


def _server_side(obj: dict[str, Any]) -> dict[str, Any]:
    for field in ("uid", "resourceVersion"):
        obj["metadata"].pop(field, None)
    return obj


def _gpu_pod(workload: Workload, name: str, scheduler: str) -> None:
    """A pod on `workload`'s node asking for one GPU through its own claim."""
    claim = make_claim(name, workload.namespace).request("gpu", "gpu").dict()
    _created(
        workload.admin,
        f"{RESOURCE_API}/namespaces/{workload.namespace}/resourceclaims",
        _server_side(claim),
    )
    manifest = workload.pod_manifest(name, scheduler)
    manifest["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": name}]
    manifest["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    workload.create_pod(manifest)


def test_a_rule_holds_both_schedulers_pods_alike_until_it_is_deleted(
    e2e_binaries: ControlPlaneBinaries, rules_plane: ControlPlane, tmp_path: Path
) -> None:
    admin, namespace = admin_and_namespace(rules_plane)
    driver = f"{unique('gpu')}.example.com"
    _created(
        admin,
        f"{RESOURCE_API}/deviceclasses",
        make_device_class("gpu", f'device.driver == "{driver}"'),
    )
    # One node and one GPU per scheduler: the two never contend for a device.
    workloads = {owner: Workload(admin, namespace) for owner in ("ours", "theirs")}
    for owner, workload in workloads.items():
        [node] = workload.create_nodes(1)
        _created(
            admin,
            f"{RESOURCE_API}/resourceslices",
            make_slice(f"{owner}-gpus", driver, [device("gpu-0")], node=node),
        )
    rule = make_device_taint_rule("gpus-out", FAULTY, driver=driver)
    _created(admin, RULES, rule)

    with both_schedulers(e2e_binaries, rules_plane, tmp_path, [GATE]) as ours:
        _gpu_pod(workloads["ours"], "ours", ours)
        _gpu_pod(workloads["theirs"], "theirs", UPSTREAM)
        workloads["ours"].wait_events(
            "FailedScheduling", ["ours", "theirs"], timeout_s=EVENT_TIMEOUT_S
        )
        pods = workloads["ours"].pods()
        assert not any(p["spec"].get("nodeName") for p in pods.values())
        messages = {name: pod_scheduled_condition(pods[name]) for name in ("ours", "theirs")}
        assert messages["ours"] is not None and messages["theirs"] is not None
        assert "cannot allocate all claims" in messages["theirs"]["message"]
        assert messages["ours"]["message"] == messages["theirs"]["message"]

        assert admin.delete(f"{RULES}/gpus-out").status == 200
        placed = workloads["ours"].wait_bound(["ours", "theirs"], timeout_s=BIND_TIMEOUT_S)
        assert placed == {
            "ours": workloads["ours"].nodes[0],
            "theirs": workloads["theirs"].nodes[0],
        }
