"""CSI attach limits on a real apiserver, beside kube-scheduler v1.36.3: a VolumeAttachment
still holding a node's only slot keeps both schedulers' pods off it, with the same message,
until it is deleted, whether the pod's volume is a CSI one or an inline in-tree EBS disk (CSI
migration counts it as the EBS CSI driver's); and with VolumeLimitScaling a driver that asks
for it keeps both schedulers' pods off a node whose CSINode lacks the driver, until the driver
registers there.

The apiserver keeps a CSIDriver's `preventPodSchedulingIfMissing` only with VolumeLimitScaling
on, so this test runs its own control plane with the gate, as both schedulers do. Each
scheduler has nodes of its own, so the two never contend for a slot.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_csi_driver
from scheduler.testing.storage_builders import make_csi_node
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_volume_attachment
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

GATE = "--feature-gates=VolumeLimitScaling=true"
EBS = "ebs.csi.aws.com"
STORAGE = "/apis/storage.k8s.io/v1"


@pytest.fixture(scope="module")
def scaling_plane(e2e_binaries: ControlPlaneBinaries) -> Iterator[ControlPlane]:
    with ControlPlane(e2e_binaries, (GATE,)) as plane:
        yield plane


def _created(admin: ApiClient, path: str, body: dict[str, Any]) -> None:
    for field in ("uid", "resourceVersion"):
        body["metadata"].pop(field, None)
    created = admin.post(path, body)
    assert created.status == 201, created


def _bound_claim(workload: Workload, name: str, driver: str) -> None:
    """A PVC bound to a CSI volume of `driver`, as the PV controller would leave them."""
    namespace = workload.namespace
    pv = make_pv(f"{namespace}-{name}").csi(driver).claim(name, namespace).dict()
    _created(workload.admin, "/api/v1/persistentvolumes", pv)
    pvc = make_pvc(name, namespace).request("1Gi").bound_to(pv["metadata"]["name"]).dict()
    pvc.pop("status")
    _created(workload.admin, f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", pvc)
    for path, phase in (
        (f"/api/v1/persistentvolumes/{pv['metadata']['name']}/status", "Bound"),
        (f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}/status", "Bound"),
    ):
        patched = workload.admin.request(
            "PATCH", path, {"status": {"phase": phase}}, content_type="application/merge-patch+json"
        )
        assert patched.status == 200, patched


def _pod_with_claim(workload: Workload, name: str, scheduler: str, claim: str) -> None:
    manifest = workload.pod_manifest(name, scheduler)
    manifest["spec"]["volumes"] = [claim_volume(claim)]
    workload.create_pod(manifest)


def _pod_with_inline_ebs(workload: Workload, name: str, scheduler: str) -> None:
    manifest = workload.pod_manifest(name, scheduler)
    disk = {"volumeID": f"aws://us-east-1a/vol-{uuid.uuid4().hex[:17]}"}
    manifest["spec"]["volumes"] = [{"name": "disk", "awsElasticBlockStore": disk}]
    workload.create_pod(manifest)


def _same_pending_message(workload: Workload, names: list[str]) -> str:
    workload.wait_events("FailedScheduling", names, timeout_s=EVENT_TIMEOUT_S)
    pods = workload.pods()
    conditions = [pod_scheduled_condition(pods[name]) for name in names]
    messages = {c["message"] for c in conditions if c is not None}
    assert len(conditions) == len(names) and len(messages) == 1, conditions
    return str(messages.pop())


def test_attachments_and_missing_drivers_hold_both_schedulers_pods_alike(
    e2e_binaries: ControlPlaneBinaries, scaling_plane: ControlPlane, tmp_path: Path
) -> None:
    admin, namespace = admin_and_namespace(scaling_plane)
    attached = f"{unique('attach')}.example.com"
    required = f"{unique('required')}.example.com"
    _created(admin, f"{STORAGE}/csidrivers", make_csi_driver(required, required_on_node=True))

    workloads = {owner: Workload(admin, namespace) for owner in ("ours", "theirs")}
    for owner, workload in workloads.items():
        # One node: one slot of `attached` and one of EBS, each held by a volume no pod uses;
        # `required` absent.
        [node] = workload.create_nodes(1)
        _created(admin, f"{STORAGE}/csinodes", make_csi_node(node, **{attached: 1, EBS: 1}))
        for driver in (attached, EBS):
            held = make_pv(f"{namespace}-{owner}-{driver}").csi(driver).dict()
            _created(admin, "/api/v1/persistentvolumes", held)
            attachment = make_volume_attachment(
                held["metadata"]["name"], driver, node, held["metadata"]["name"]
            )
            _created(admin, f"{STORAGE}/volumeattachments", attachment)
        _bound_claim(workload, f"{owner}-attached", attached)
        _bound_claim(workload, f"{owner}-required", required)

    with both_schedulers(e2e_binaries, scaling_plane, tmp_path, [GATE]) as ours:
        for owner, scheduler in (("ours", ours), ("theirs", UPSTREAM)):
            _pod_with_claim(workloads[owner], f"{owner}-a", scheduler, f"{owner}-attached")
            _pod_with_claim(workloads[owner], f"{owner}-r", scheduler, f"{owner}-required")
            _pod_with_inline_ebs(workloads[owner], f"{owner}-i", scheduler)
        # Any workload of the namespace sees every pod of it.
        pods = workloads["ours"]
        held_message = _same_pending_message(pods, ["ours-a", "theirs-a"])
        assert "1 node(s) exceed max volume count" in held_message
        missing_message = _same_pending_message(pods, ["ours-r", "theirs-r"])
        assert f"1 {required} CSI driver is not installed on the node" in missing_message
        # An inline in-tree EBS disk counts as the CSI volume migration makes of it.
        inline_message = _same_pending_message(pods, ["ours-i", "theirs-i"])
        assert "1 node(s) exceed max volume count" in inline_message

        # The volume is detached, and the driver registers on the nodes.
        for owner, workload in workloads.items():
            for driver in (attached, EBS):
                name = f"{namespace}-{owner}-{driver}"
                deleted = admin.delete(f"{STORAGE}/volumeattachments/{name}")
                assert deleted.status == 200, deleted
            node = workload.nodes[0]
            assert admin.delete(f"{STORAGE}/csinodes/{node}").status == 200
            drivers = {attached: 1, EBS: 1, required: 4}
            _created(admin, f"{STORAGE}/csinodes", make_csi_node(node, **drivers))
        placed = pods.wait_bound(
            [f"{owner}-{kind}" for owner in workloads for kind in "ari"], timeout_s=BIND_TIMEOUT_S
        )
        assert placed == {
            f"{owner}-{kind}": workload.nodes[0]
            for owner, workload in workloads.items()
            for kind in "ari"
        }
