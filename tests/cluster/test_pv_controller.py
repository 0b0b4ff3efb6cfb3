"""The in-memory cluster's PV controller: binding, pre-binding, provisioning, Available."""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler.cluster.sim import SimCluster
from scheduler.cluster.sim.pv_controller import PVBinderController
from scheduler.testing import make_node
from scheduler.testing.storage_builders import make_csi_node
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_class

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def _get(sim: SimCluster, resource: str, name: str) -> dict[str, Any]:
    return next(o for o in sim.objects(resource) if o["metadata"]["name"] == name)


def _pvc(sim: SimCluster, name: str) -> dict[str, Any]:
    return _get(sim, "persistentvolumeclaims", name)


def _pv(sim: SimCluster, name: str) -> dict[str, Any]:
    return _get(sim, "persistentvolumes", name)


def _assert_bound(sim: SimCluster, claim: str, volume: str) -> None:
    pvc, pv = _pvc(sim, claim), _pv(sim, volume)
    assert pvc["spec"]["volumeName"] == volume
    assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert pvc["status"]["phase"] == "Bound"
    assert pvc["status"]["capacity"] == pv["spec"]["capacity"]
    assert pv["status"]["phase"] == "Bound"
    assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]


async def test_new_unclaimed_volumes_become_available(sim: SimCluster) -> None:
    sim.load([make_pv("free").dict(), make_pv("taken").claim("someone").dict()])
    controller = PVBinderController(sim)
    await controller.sync()
    assert _pv(sim, "free")["status"]["phase"] == "Available"
    assert _pv(sim, "taken")["status"].get("phase") != "Available"
    assert await controller.sync() == 0, "a second pass has nothing left to do"


async def test_a_claim_ref_written_by_the_scheduler_completes_the_binding(
    sim: SimCluster,
) -> None:
    sim.load(
        [
            make_storage_class("local", "kubernetes.io/no-provisioner")
            .wait_for_first_consumer()
            .dict(),
            make_pvc("data").storage_class("local").request("5Gi").dict(),
            make_pv("pv-a").storage_class("local").capacity("10Gi").available().dict(),
        ]
    )
    uid = _pvc(sim, "data")["metadata"]["uid"]
    controller = PVBinderController(sim)
    assert await controller.sync() == 0, "a WaitForFirstConsumer claim waits for the scheduler"
    await sim.patch_object(
        "persistentvolumes",
        "",
        "pv-a",
        {"spec": {"claimRef": {"namespace": "default", "name": "data", "uid": uid}}},
    )
    await controller.sync()
    _assert_bound(sim, "data", "pv-a")


async def test_a_claim_pre_bound_by_name_gets_its_volume(sim: SimCluster) -> None:
    sim.load(
        [
            make_pvc("data").volume_name("pv-a").dict(),
            make_pv("pv-a").available().dict(),
            make_pv("pv-b").available().dict(),
        ]
    )
    await PVBinderController(sim).sync()
    _assert_bound(sim, "data", "pv-a")
    assert "claimRef" not in _pv(sim, "pv-b")["spec"]


async def test_an_immediate_claim_binds_to_the_smallest_volume_that_fits(
    sim: SimCluster,
) -> None:
    sim.load(
        [
            make_storage_class("std", "kubernetes.io/no-provisioner").dict(),
            make_pvc("data").storage_class("std").request("5Gi").dict(),
            make_pv("too-small").storage_class("std").capacity("1Gi").available().dict(),
            make_pv("big").storage_class("std").capacity("50Gi").available().dict(),
            make_pv("snug").storage_class("std").capacity("8Gi").available().dict(),
            make_pv("other-class").storage_class("x").capacity("6Gi").available().dict(),
        ]
    )
    await PVBinderController(sim).sync()
    _assert_bound(sim, "data", "snug")


async def test_a_selected_node_claim_is_provisioned_in_the_nodes_zone(sim: SimCluster) -> None:
    sim.load(
        [
            make_node("n1").zone("zone-b").dict(),
            make_storage_class("fast", "csi.example.com").wait_for_first_consumer().dict(),
            make_pvc("data").storage_class("fast").request("3Gi").selected_node("n1").dict(),
        ]
    )
    uid = _pvc(sim, "data")["metadata"]["uid"]
    await PVBinderController(sim).sync()
    pv = _pv(sim, f"pvc-{uid}")
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-b"]}]}
    ]
    assert pv["spec"]["csi"]["driver"] == "csi.example.com"
    assert pv["spec"]["capacity"] == {"storage": "3Gi"}
    assert pv["spec"]["storageClassName"] == "fast"
    _assert_bound(sim, "data", f"pvc-{uid}")


async def test_provisioning_follows_the_drivers_topology_keys_else_the_hostname(
    sim: SimCluster,
) -> None:
    csi_node = make_csi_node("n1", **{"csi.example.com": None})
    csi_node["spec"]["drivers"][0]["topologyKeys"] = ["rack"]
    sim.load(
        [
            make_node("n1").label("rack", "r7").zone("zone-a").dict(),
            make_node("n2").dict(),
            csi_node,
            make_storage_class("fast").wait_for_first_consumer().dict(),
            make_pvc("on-n1").storage_class("fast").request("1Gi").selected_node("n1").dict(),
            make_pvc("on-n2").storage_class("fast").request("1Gi").selected_node("n2").dict(),
        ]
    )
    await PVBinderController(sim).sync()

    def terms(claim: str) -> Any:
        volume = _pvc(sim, claim)["spec"]["volumeName"]
        return _pv(sim, volume)["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]

    assert terms("on-n1") == [
        {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r7"]}]}
    ]
    assert terms("on-n2") == [
        {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": ["n2"]}]}
    ]


async def test_nothing_is_provisioned_without_a_provisioner(sim: SimCluster) -> None:
    sim.load(
        [
            make_node("n1").dict(),
            make_storage_class("local", "kubernetes.io/no-provisioner")
            .wait_for_first_consumer()
            .dict(),
            make_pvc("data").storage_class("local").selected_node("n1").dict(),
        ]
    )
    assert await PVBinderController(sim).sync() == 0
    assert sim.objects("persistentvolumes") == []
    assert _pvc(sim, "data")["status"]["phase"] == "Pending"


async def test_run_reacts_to_changes_until_cancelled(sim: SimCluster) -> None:
    sim.load([make_pvc("data").volume_name("pv-a").dict()])
    task = asyncio.create_task(PVBinderController(sim).run())
    for _ in range(20):
        await asyncio.sleep(0)
    assert _pvc(sim, "data")["status"]["phase"] == "Pending", "no volume yet"

    await sim.create("persistentvolumes", make_pv("pv-a").dict())
    for _ in range(50):
        await asyncio.sleep(0)
        if _pvc(sim, "data")["status"]["phase"] == "Bound":
            break
    _assert_bound(sim, "data", "pv-a")
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
