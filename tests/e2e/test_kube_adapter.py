"""The kube adapter against a real kube-apiserver: the port's promises, checked on the wire."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.port import WatchEvent
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import GoneError
from scheduler.framework.errors import NotFoundError
from scheduler.objects.pod import Pod
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.e2e.api_client import ApiClient
from tests.e2e.controlplane import ControlPlane

pytestmark = pytest.mark.e2e

# A scheduler name nobody serves, so only the test itself binds the pods.
UNSERVED_SCHEDULER = "e2e-nobody"
# An upper bound for waiting on the server, not a synchronisation delay.
WAIT_S = 30.0


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _pod_manifest(name: str, namespace: str) -> dict[str, Any]:
    manifest = make_pod(name, namespace).scheduler(UNSERVED_SCHEDULER).req(cpu="100m").dict()
    manifest["metadata"].pop("uid", None)  # the server assigns its own
    return manifest


async def _create_pod(kube: KubeClusterClient, name: str, namespace: str) -> Pod:
    return Pod.from_dict(await kube.create("pods", _pod_manifest(name, namespace)))


async def _create_node(kube: KubeClusterClient) -> str:
    manifest = make_node(_unique("node")).capacity(cpu="4", memory="8Gi", pods=110).dict()
    manifest["metadata"].pop("uid", None)
    created = await kube.create("nodes", manifest)
    return str(created["metadata"]["name"])


async def _next_event(events: AsyncIterator[WatchEvent], wanted: str) -> WatchEvent:
    async def scan() -> WatchEvent:
        async for event in events:
            if event.type != "BOOKMARK" and event.object["metadata"]["name"] == wanted:
                return event
        raise AssertionError(f"watch ended before an event for {wanted}")

    return await asyncio.wait_for(scan(), WAIT_S)


async def test_list_then_watch_sees_new_pods(kube: KubeClusterClient, namespace: str) -> None:
    await _create_pod(kube, "before", namespace)
    listed = await kube.list("pods", namespace=namespace)
    assert [p["metadata"]["name"] for p in listed.items] == ["before"]
    assert listed.items[0]["kind"] == "Pod"

    events = kube.watch(
        "pods",
        resource_version=listed.resource_version,
        field_selector=f"metadata.namespace={namespace}",
    )
    try:
        await _create_pod(kube, "after", namespace)
        event = await _next_event(events, "after")
    finally:
        await events.aclose()
    assert event.type == "ADDED"
    assert int(event.resource_version) > int(listed.resource_version)


async def test_list_with_a_field_selector(kube: KubeClusterClient, namespace: str) -> None:
    await _create_pod(kube, "a", namespace)
    await _create_pod(kube, "b", namespace)
    listed = await kube.list(
        "pods", field_selector=f"metadata.namespace={namespace},metadata.name=b"
    )
    assert [p["metadata"]["name"] for p in listed.items] == ["b"]


async def test_bind_sets_the_node_and_a_second_bind_conflicts(
    kube: KubeClusterClient, namespace: str
) -> None:
    node = await _create_node(kube)
    pod = await _create_pod(kube, "web", namespace)
    await kube.bind(pod, node)
    stored = await kube.get("pods", namespace, "web")
    assert stored["spec"]["nodeName"] == node
    scheduled = [c for c in stored["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert [c["status"] for c in scheduled] == ["True"]
    with pytest.raises(ConflictError, match="already assigned"):
        await kube.bind(pod, node)


async def test_concurrent_binds_all_land(kube: KubeClusterClient, namespace: str) -> None:
    nodes = [await _create_node(kube) for _ in range(3)]
    pods = await asyncio.gather(*(_create_pod(kube, f"p{i}", namespace) for i in range(60)))
    await asyncio.gather(*(kube.bind(p, nodes[i % 3]) for i, p in enumerate(pods)))
    listed = await kube.list("pods", namespace=namespace)
    placed = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in listed.items}
    assert placed == {f"p{i}": nodes[i % 3] for i in range(60)}


async def test_bind_of_a_deleted_pod_is_not_found(kube: KubeClusterClient, namespace: str) -> None:
    node = await _create_node(kube)
    pod = await _create_pod(kube, "gone", namespace)
    await kube.delete_pod(namespace, "gone", pod.uid, grace_period_seconds=0)
    with pytest.raises(NotFoundError):
        await kube.bind(pod, node)


async def test_bind_never_binds_a_recreated_pod_of_the_same_name(
    kube: KubeClusterClient, namespace: str
) -> None:
    node = await _create_node(kube)
    old = await _create_pod(kube, "again", namespace)
    await kube.delete_pod(namespace, "again", old.uid, grace_period_seconds=0)
    await _create_pod(kube, "again", namespace)
    # The server refuses on the Binding's uid precondition; for the port the pod is gone.
    with pytest.raises(NotFoundError, match="UID"):
        await kube.bind(old, node)
    assert not (await kube.get("pods", namespace, "again"))["spec"].get("nodeName")


async def test_delete_pod_with_a_stale_uid_conflicts(
    kube: KubeClusterClient, namespace: str
) -> None:
    await _create_pod(kube, "victim", namespace)
    with pytest.raises(ConflictError, match="UID"):
        await kube.delete_pod(namespace, "victim", "not-the-uid")
    await kube.get("pods", namespace, "victim")


async def test_status_patches_merge_conditions_by_type(
    kube: KubeClusterClient, namespace: str
) -> None:
    await _create_pod(kube, "pending", namespace)
    unschedulable = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    await kube.patch_pod_status(namespace, "pending", {"conditions": [unschedulable]})
    await kube.patch_pod_status(
        namespace,
        "pending",
        {"status": {"conditions": [{"type": "PodScheduled", "message": "0/3 nodes"}]}},
    )
    await kube.patch_pod_status(namespace, "pending", {"nominatedNodeName": "n1"})
    await kube.patch_pod_status(namespace, "pending", {"nominatedNodeName": None})
    status = (await kube.get("pods", namespace, "pending"))["status"]
    scheduled = [c for c in status["conditions"] if c["type"] == "PodScheduled"]
    assert len(scheduled) == 1
    assert scheduled[0]["reason"] == "Unschedulable"
    assert scheduled[0]["message"] == "0/3 nodes"
    assert "nominatedNodeName" not in status


async def test_patch_object_merges_and_respects_a_stale_version(
    kube: KubeClusterClient, namespace: str
) -> None:
    created = await kube.create(
        "configmaps", {"metadata": {"name": "cm", "namespace": namespace}, "data": {"a": "1"}}
    )
    await kube.patch_object("configmaps", namespace, "cm", {"data": {"b": "2"}})
    assert (await kube.get("configmaps", namespace, "cm"))["data"] == {"a": "1", "b": "2"}
    stale = {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}}
    with pytest.raises(ConflictError):
        await kube.patch_object("configmaps", namespace, "cm", {**stale, "data": {"c": "3"}})


async def test_lease_create_and_update_conflicts(kube: KubeClusterClient, namespace: str) -> None:
    lease = {
        "metadata": {"name": "kube-pyscheduler", "namespace": namespace},
        "spec": {"holderIdentity": "one", "leaseDurationSeconds": 15},
    }
    created = await kube.create("leases", lease)
    assert created["apiVersion"] == "coordination.k8s.io/v1"
    with pytest.raises(ConflictError, match="already exists"):
        await kube.create("leases", lease)

    renewed = await kube.update("leases", {**created, "spec": {"holderIdentity": "one"}})
    assert renewed["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    with pytest.raises(ConflictError, match="has been modified"):
        await kube.update("leases", {**created, "spec": {"holderIdentity": "two"}})
    stored = await kube.get("leases", namespace, "kube-pyscheduler")
    assert stored["spec"]["holderIdentity"] == "one"

    await kube.delete("leases", namespace, "kube-pyscheduler")
    with pytest.raises(NotFoundError):
        await kube.get("leases", namespace, "kube-pyscheduler")
    # Unlike the simulator's NotFoundError, a real server refuses the PUT of a deleted object
    # on the uid the body still carries (without one, a Lease PUT would create it anew).
    with pytest.raises(ConflictError, match="UID"):
        await kube.update("leases", created)


def _event(namespace: str, name: str, uid: str = "") -> dict[str, Any]:
    regarding = {"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": name}
    return {
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "kube-pyscheduler",
        "reportingInstance": "kube-pyscheduler-e2e",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "type": "Warning",
        "note": "0/0 nodes are available",
        "regarding": {**regarding, "uid": uid} if uid else regarding,
    }


async def test_create_event_records_an_events_v1_event(
    kube: KubeClusterClient, namespace: str
) -> None:
    pod = await _create_pod(kube, "noted", namespace)
    await kube.create_event(_event(namespace, pod.name, pod.uid))
    events = (await kube.list("events", namespace=namespace)).items
    assert [(e["reason"], e["note"]) for e in events] == [
        ("FailedScheduling", "0/0 nodes are available")
    ]
    assert events[0]["metadata"]["name"].startswith("noted.")
    assert events[0]["regarding"]["uid"] == pod.uid


async def test_watch_from_a_compacted_version_is_gone(
    control_plane: ControlPlane, kube: KubeClusterClient, namespace: str
) -> None:
    # Events have no watch cache in kube-apiserver, so their watches read etcd's history
    # directly: once etcd compacts it, a watch from before the compaction is 410 Gone. (Cached
    # resources serve recent history from the cache and only expire once it overflows.)
    await kube.create_event(_event(namespace, "first"))
    listed = await kube.list("events", namespace=namespace)
    # etcd keeps the compaction revision itself: two more writes put the first change after
    # `listed` strictly below it.
    await kube.create_event(_event(namespace, "second"))
    await kube.create_event(_event(namespace, "third"))
    latest = (await kube.list("events", namespace=namespace)).resource_version
    etcd = ApiClient(control_plane.etcd_url)
    compacted = await asyncio.to_thread(
        etcd.post, "/v3/kv/compaction", {"revision": latest, "physical": True}
    )
    assert compacted.status == 200, compacted
    events = kube.watch("events", resource_version=listed.resource_version)
    with pytest.raises(GoneError, match="too old"):
        await asyncio.wait_for(anext(events), WAIT_S)
