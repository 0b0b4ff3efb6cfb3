"""The pod writes a scheduler makes: bind, status patches, deletes, merge patches."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cluster.sim import SimCluster
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_pod


async def pending_pod(sim: SimCluster, name: str = "web") -> Pod:
    created = await sim.create("pods", make_pod(name).dict())
    return Pod.from_dict(created)


def conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in obj["status"].get("conditions", [])}


async def test_bind_sets_node_and_pod_scheduled(sim: SimCluster, clock: FakeClock) -> None:
    pod = await pending_pod(sim)
    clock.advance(3)
    before = sim.revision
    await sim.bind(pod, "n1")
    bound = await sim.get("pods", "default", "web")
    assert bound["spec"]["nodeName"] == "n1"
    scheduled = conditions(bound)["PodScheduled"]
    assert scheduled["status"] == "True"
    assert scheduled["lastTransitionTime"] == "2026-01-01T00:00:03Z"
    assert bound["metadata"]["resourceVersion"] == str(before + 1)


async def test_bind_replaces_an_earlier_unschedulable_condition(sim: SimCluster) -> None:
    pod = await pending_pod(sim)
    await sim.patch_pod_status(
        "default",
        "web",
        {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
    )
    await sim.bind(pod, "n1")
    bound = await sim.get("pods", "default", "web")
    assert len(bound["status"]["conditions"]) == 1
    assert conditions(bound)["PodScheduled"]["status"] == "True"


async def test_binding_a_bound_pod_conflicts(sim: SimCluster) -> None:
    pod = await pending_pod(sim)
    await sim.bind(pod, "n1")
    with pytest.raises(ConflictError, match='pod web is already assigned to node "n1"') as raised:
        await sim.bind(pod, "n2")
    assert raised.value.status == 409
    assert (await sim.get("pods", "default", "web"))["spec"]["nodeName"] == "n1"


async def test_binding_a_deleted_pod_is_not_found(sim: SimCluster) -> None:
    pod = await pending_pod(sim)
    await sim.delete_pod("default", "web")
    with pytest.raises(NotFoundError) as raised:
        await sim.bind(pod, "n1")
    assert raised.value.status == 404


async def test_binding_a_replaced_pod_is_not_found(sim: SimCluster) -> None:
    old = await pending_pod(sim)
    await sim.delete_pod("default", "web")
    await pending_pod(sim)  # same name, new uid
    with pytest.raises(NotFoundError, match="now has UID"):
        await sim.bind(old, "n1")


async def test_binding_a_terminating_pod_conflicts(sim: SimCluster) -> None:
    raw = make_pod("dying").dict()
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    pod = Pod.from_dict(await sim.create("pods", raw))
    with pytest.raises(ConflictError, match="pod dying is being deleted"):
        await sim.bind(pod, "n1")


async def test_deletion_timestamp_cannot_be_patched_in(sim: SimCluster) -> None:
    pod = await pending_pod(sim)
    stamp = {"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}
    await sim.patch_object("pods", "default", "web", stamp)
    await sim.bind(pod, "n1")
    assert "deletionTimestamp" not in (await sim.get("pods", "default", "web"))["metadata"]


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        pytest.param(
            {
                "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
                ]
            },
            {
                "Ready": {"type": "Ready", "status": "False", "message": "keep"},
                "PodScheduled": {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                },
            },
            id="new-type-appends",
        ),
        pytest.param(
            {"conditions": [{"type": "Ready", "status": "True"}]},
            {"Ready": {"type": "Ready", "status": "True", "message": "keep"}},
            id="same-type-merges-fields",
        ),
        pytest.param(
            {"status": {"conditions": [{"type": "Ready", "message": None}]}},
            {"Ready": {"type": "Ready", "status": "False"}},
            id="whole-body-form-and-null-removes",
        ),
    ],
)
async def test_status_patch_merges_conditions_by_type(
    sim: SimCluster, patch: dict[str, Any], expected: dict[str, dict[str, Any]]
) -> None:
    raw = make_pod("web").dict()
    raw["status"]["conditions"] = [{"type": "Ready", "status": "False", "message": "keep"}]
    await sim.create("pods", raw)
    await sim.patch_pod_status("default", "web", patch)
    assert conditions(await sim.get("pods", "default", "web")) == expected


async def test_status_patch_merges_other_fields(sim: SimCluster) -> None:
    await pending_pod(sim)
    await sim.patch_pod_status("default", "web", {"nominatedNodeName": "n2"})
    await sim.patch_pod_status("default", "web", {"message": "hi"})
    status = (await sim.get("pods", "default", "web"))["status"]
    assert status == {"phase": "Pending", "nominatedNodeName": "n2", "message": "hi"}
    await sim.patch_pod_status("default", "web", {"nominatedNodeName": None})
    assert "nominatedNodeName" not in (await sim.get("pods", "default", "web"))["status"]


async def test_status_patch_of_a_missing_pod_is_not_found(sim: SimCluster) -> None:
    with pytest.raises(NotFoundError):
        await sim.patch_pod_status("default", "ghost", {"message": "x"})


async def test_a_status_patch_that_changes_nothing_is_not_written(sim: SimCluster) -> None:
    await pending_pod(sim)
    await sim.patch_pod_status("default", "web", {"phase": "Pending"})
    before = sim.revision
    await sim.patch_pod_status("default", "web", {"phase": "Pending"})
    assert sim.revision == before


async def test_delete_pod_checks_the_uid_precondition(sim: SimCluster) -> None:
    pod = await pending_pod(sim)
    with pytest.raises(ConflictError, match="Precondition failed: UID in precondition: other"):
        await sim.delete_pod("default", "web", uid="other")
    await sim.delete_pod("default", "web", uid=pod.uid)
    assert sim.objects("pods") == []


async def test_patch_object_merges_and_protects_server_fields(sim: SimCluster) -> None:
    created = await sim.create("persistentvolumeclaims", _pvc("data"))
    await sim.patch_object(
        "persistentvolumeclaims",
        "default",
        "data",
        {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": "n1"}, "uid": "x"}},
    )
    patched = await sim.get("persistentvolumeclaims", "default", "data")
    assert patched["metadata"]["annotations"] == {"volume.kubernetes.io/selected-node": "n1"}
    assert patched["metadata"]["uid"] == created["metadata"]["uid"]
    assert patched["spec"] == created["spec"]


async def test_patch_object_with_a_stale_version_conflicts(sim: SimCluster) -> None:
    created = await sim.create("persistentvolumeclaims", _pvc("data"))
    await sim.patch_object("persistentvolumeclaims", "default", "data", {"spec": {"x": 1}})
    stale = {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}}
    with pytest.raises(ConflictError):
        await sim.patch_object("persistentvolumeclaims", "default", "data", stale)


def _pvc(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


async def test_bound_pods_counts_pods_with_a_node_through_every_kind_of_write(
    sim: SimCluster,
) -> None:
    sim.load([make_pod("placed").node("n1").dict(), make_pod("waiting").dict()])
    assert sim.bound_pods == 1
    await sim.bind(await pending_pod(sim, "web"), "n2")
    assert sim.bound_pods == 2
    await sim.patch_pod_status("default", "web", {"phase": "Running"})
    assert sim.bound_pods == 2
    await sim.delete_pod("default", "placed")
    await sim.delete_pod("default", "waiting")
    assert sim.bound_pods == 1
    assert sim.bound_pods == sum(1 for p in sim.objects("pods") if p["spec"].get("nodeName"))


async def test_a_pod_created_with_gates_gets_the_api_servers_gated_condition(
    sim: SimCluster,
) -> None:
    gated = await sim.create("pods", make_pod("gated").scheduling_gate("example.com/q").dict())
    assert conditions(gated)["PodScheduled"] == {
        "type": "PodScheduled",
        "status": "False",
        "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    assert "conditions" not in (await sim.create("pods", make_pod("free").dict()))["status"]
    # A PodScheduled condition the pod is created with is kept, as the API server keeps it.
    own = make_pod("own").scheduling_gate("example.com/q").dict()
    own["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "X"}]
    assert conditions(await sim.create("pods", own))["PodScheduled"]["reason"] == "X"
    # Only creation adds it: gates put back by an update bring no condition.
    free = await sim.get("pods", "default", "free")
    free["spec"]["schedulingGates"] = [{"name": "example.com/q"}]
    assert "conditions" not in (await sim.update("pods", free))["status"]
