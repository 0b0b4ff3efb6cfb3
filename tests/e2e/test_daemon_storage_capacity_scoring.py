"""Storage capacity scoring on a real apiserver, beside kube-scheduler v1.36.3 with the same
StorageCapacityScoring gate: for a claim waiting for its first consumer, both schedulers select
the node whose CSIStorageCapacity pool of the claim's class is the emptiest.

Each scheduler has three nodes of its own that differ only in their pool (10, 100 and 50 GiB),
so any other choice would be a tie broken at random. No provisioner runs here: the choice shows
in the claim's `volume.kubernetes.io/selected-node` annotation, which PreBind writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduler.objects.volume_annotations import ANN_SELECTED_NODE
from scheduler.testing import make_node
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_csi_driver
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_capacity
from scheduler.testing.storage_builders import make_storage_class
from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import poll_until
from tests.e2e.side_by_side import BIND_TIMEOUT_S
from tests.e2e.side_by_side import admin_and_namespace
from tests.e2e.side_by_side import both_schedulers
from tests.e2e.upstream_scheduler import SCHEDULER_NAME as UPSTREAM
from tests.e2e.workload import NODE_LABEL
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

GATE = "--feature-gates=StorageCapacityScoring=true"
POOL_LABEL = "e2e.example.com/pool"
STORAGE = "/apis/storage.k8s.io/v1"
POOL_SIZES = ("10Gi", "100Gi", "50Gi")


def _created(admin: ApiClient, path: str, body: dict[str, Any]) -> None:
    body["metadata"].pop("uid", None)
    created = admin.post(path, body)
    assert created.status == 201, created


def _node_with_pool(workload: Workload, storage_class: str, size: str) -> str:
    """A node reaching one CSIStorageCapacity pool of `storage_class`, of `size`."""
    name = unique("pooled")
    node = make_node(name).capacity(cpu="4", memory="8Gi", pods=110)
    node.label(NODE_LABEL, workload.label_value).label(POOL_LABEL, name)
    _created(workload.admin, "/api/v1/nodes", node.dict())
    workload.nodes.append(name)
    pool = make_storage_capacity(unique("pool"), storage_class, size, namespace=workload.namespace)
    pool["nodeTopology"] = {"matchLabels": {POOL_LABEL: name}}
    _created(
        workload.admin, f"{STORAGE}/namespaces/{workload.namespace}/csistoragecapacities", pool
    )
    return name


def test_both_schedulers_select_the_node_with_the_emptiest_pool(
    e2e_binaries: ControlPlaneBinaries, control_plane: ControlPlane, tmp_path: Path
) -> None:
    admin, namespace = admin_and_namespace(control_plane)
    driver = f"{unique('pools')}.csi.example.com"
    storage_class = unique("pooled")
    _created(admin, f"{STORAGE}/csidrivers", make_csi_driver(driver, storage_capacity=True))
    waiting = make_storage_class(storage_class, driver).wait_for_first_consumer().dict()
    _created(admin, f"{STORAGE}/storageclasses", waiting)

    workloads = {owner: Workload(admin, namespace) for owner in ("ours", "theirs")}
    emptiest: dict[str, str] = {}
    for owner, workload in workloads.items():
        nodes = {size: _node_with_pool(workload, storage_class, size) for size in POOL_SIZES}
        emptiest[owner] = nodes["100Gi"]
        claim = make_pvc(f"{owner}-data", namespace).storage_class(storage_class)
        manifest = claim.request("5Gi").dict()
        manifest.pop("status", None)
        _created(admin, f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", manifest)

    with both_schedulers(e2e_binaries, control_plane, tmp_path, [GATE]) as ours:
        for owner, scheduler in (("ours", ours), ("theirs", UPSTREAM)):
            pod = workloads[owner].pod_manifest(f"{owner}-web", scheduler)
            pod["spec"]["volumes"] = [claim_volume(f"{owner}-data")]
            workloads[owner].create_pod(pod)

        def selected() -> dict[str, str] | None:
            claims = admin.get(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims")
            assert claims.status == 200, claims
            found: dict[str, str] = {}
            for claim in claims.body["items"]:
                owner = str(claim["metadata"]["name"]).removesuffix("-data")
                annotations = claim["metadata"].get("annotations") or {}
                found[owner] = str(annotations.get(ANN_SELECTED_NODE, ""))
            return found if all(found.values()) else None

        chosen = poll_until(selected, "both claims' selected node", timeout_s=BIND_TIMEOUT_S)
        assert chosen == emptiest
        # Nothing will provision the volumes: deleting the pods ends both PreBinds.
        for owner in workloads:
            admin.delete(f"/api/v1/namespaces/{namespace}/pods/{owner}-web")
