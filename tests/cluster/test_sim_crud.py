"""Create, get, update, delete and list on the in-memory cluster."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.cluster.port import ClusterClient
from scheduler.cluster.sim import SYSTEM_NAMESPACES
from scheduler.cluster.sim import SimCluster
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.testing import FakeClock
from scheduler.testing import make_node
from scheduler.testing import make_pod


def lease(name: str, holder: str = "a") -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {"holderIdentity": holder},
    }


def test_sim_cluster_satisfies_the_port(sim: SimCluster) -> None:
    client: ClusterClient = sim  # checked by mypy
    assert client is sim


async def test_create_assigns_server_fields_from_the_clock(
    sim: SimCluster, clock: FakeClock
) -> None:
    clock.advance(5)
    raw = make_pod("web").dict()
    del raw["metadata"]["uid"]
    created = await sim.create("pods", raw)
    meta = created["metadata"]
    assert meta["creationTimestamp"] == "2026-01-01T00:00:05Z"
    assert meta["generation"] == 1
    assert meta["resourceVersion"] == str(sim.revision)
    assert len(meta["uid"]) == 36
    assert created["spec"]["schedulerName"] == "default-scheduler"
    assert created["status"]["phase"] == "Pending"


async def test_uids_are_reproducible_from_the_seed(clock: FakeClock) -> None:
    def uids(seed: int) -> list[str]:
        sim = SimCluster(clock, rng=random.Random(seed))
        return [ns["metadata"]["uid"] for ns in sim.objects("namespaces")]

    assert uids(7) == uids(7)
    assert uids(7) != uids(8)
    assert len(set(uids(7))) == len(SYSTEM_NAMESPACES)


async def test_resource_versions_increase_across_resources(sim: SimCluster) -> None:
    start = sim.revision
    node = await sim.create("nodes", make_node("n1").dict())
    pod = await sim.create("pods", make_pod("p1").dict())
    updated = await sim.update("nodes", {**node, "spec": {"unschedulable": True}})
    versions = [int(o["metadata"]["resourceVersion"]) for o in (node, pod, updated)]
    assert versions == [start + 1, start + 2, start + 3]


async def test_system_namespaces_exist_with_their_name_label(sim: SimCluster) -> None:
    namespaces = {ns["metadata"]["name"]: ns for ns in sim.objects("namespaces")}
    assert sorted(namespaces) == sorted(SYSTEM_NAMESPACES)
    labels = namespaces["kube-system"]["metadata"]["labels"]
    assert labels["kubernetes.io/metadata.name"] == "kube-system"


async def test_a_storage_class_gets_the_api_servers_defaults(sim: SimCluster) -> None:
    created = await sim.create("storageclasses", {"metadata": {"name": "c"}, "provisioner": "p"})
    assert (created["volumeBindingMode"], created["reclaimPolicy"]) == ("Immediate", "Delete")
    kept = {
        "metadata": {"name": "w"},
        "provisioner": "p",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    assert (await sim.create("storageclasses", kept))["volumeBindingMode"] == "WaitForFirstConsumer"


async def test_pods_in_unknown_namespaces_are_allowed(sim: SimCluster) -> None:
    await sim.create("pods", make_pod("p", namespace="team-a").dict())
    assert (await sim.get("pods", "team-a", "p"))["metadata"]["namespace"] == "team-a"


async def test_create_of_a_taken_name_conflicts(sim: SimCluster) -> None:
    await sim.create("leases", lease("sched"))
    with pytest.raises(ConflictError, match=r'leases.coordination.k8s.io "sched" already exists'):
        await sim.create("leases", lease("sched"))


async def test_generate_name_gets_a_suffix(sim: SimCluster) -> None:
    body = make_pod("").dict()
    body["metadata"]["generateName"] = "job-"
    created = await sim.create("pods", body)
    name = created["metadata"]["name"]
    assert name.startswith("job-")
    assert len(name) == len("job-") + 5


async def test_create_without_a_name_is_invalid(sim: SimCluster) -> None:
    with pytest.raises(APIError) as raised:
        await sim.create("pods", make_pod("").dict())
    assert raised.value.status == 422


async def test_get_returns_a_copy_the_caller_owns(sim: SimCluster) -> None:
    await sim.create("nodes", make_node("n1").dict())
    got = await sim.get("nodes", "", "n1")
    got["metadata"]["labels"]["mutated"] = "yes"
    again = await sim.get("nodes", "", "n1")
    assert "mutated" not in again["metadata"]["labels"]


async def test_create_copies_its_input(sim: SimCluster) -> None:
    raw = make_node("n1").dict()
    await sim.create("nodes", raw)
    raw["metadata"]["labels"]["late"] = "change"
    assert "late" not in sim.objects("nodes")[0]["metadata"]["labels"]


@pytest.mark.parametrize(
    ("resource", "namespace", "name", "message"),
    [
        ("pods", "default", "missing", 'pods "missing" not found'),
        ("leases", "kube-system", "nope", 'leases.coordination.k8s.io "nope" not found'),
        ("widgets", "default", "w", r"could not find the requested resource \(widgets\)"),
    ],
    ids=["pod", "lease", "unknown-resource"],
)
async def test_get_of_something_absent_is_not_found(
    sim: SimCluster, resource: str, namespace: str, name: str, message: str
) -> None:
    with pytest.raises(NotFoundError, match=message):
        await sim.get(resource, namespace, name)


async def test_update_with_a_stale_version_conflicts(sim: SimCluster) -> None:
    first = await sim.create("nodes", make_node("n1").dict())
    await sim.update("nodes", {**first, "spec": {"unschedulable": True}})
    with pytest.raises(ConflictError, match="the object has been modified"):
        await sim.update("nodes", {**first, "spec": {"unschedulable": False}})


async def test_update_without_a_version_is_unconditional(sim: SimCluster) -> None:
    await sim.create("leases", lease("l"))
    body = lease("l", holder="b")
    updated = await sim.update("leases", body)
    assert updated["spec"]["holderIdentity"] == "b"


async def test_update_of_a_missing_object_is_not_found(sim: SimCluster) -> None:
    with pytest.raises(NotFoundError):
        await sim.update("leases", lease("absent"))


async def test_update_keeps_server_owned_metadata(sim: SimCluster) -> None:
    created = await sim.create("nodes", make_node("n1").dict())
    body = {
        **created,
        "metadata": {"name": "n1", "resourceVersion": created["metadata"]["resourceVersion"]},
    }
    updated = await sim.update("nodes", body)
    for field in ("uid", "creationTimestamp"):
        assert updated["metadata"][field] == created["metadata"][field]


async def test_update_with_another_uid_conflicts(sim: SimCluster) -> None:
    created = await sim.create("nodes", make_node("n1").dict())
    body = {**created, "metadata": {**created["metadata"], "uid": "someone-else"}}
    with pytest.raises(ConflictError, match="Precondition failed"):
        await sim.update("nodes", body)


async def test_generation_counts_spec_changes_only(sim: SimCluster) -> None:
    created = await sim.create("nodes", make_node("n1").dict())
    status_only = await sim.update(
        "nodes", {**created, "status": {"capacity": {"cpu": "8"}}, "metadata": {"name": "n1"}}
    )
    spec_change = await sim.update("nodes", {**status_only, "spec": {"unschedulable": True}})
    assert [o["metadata"]["generation"] for o in (created, status_only, spec_change)] == [1, 1, 2]


async def test_an_update_that_changes_nothing_is_not_written(sim: SimCluster) -> None:
    created = await sim.create("nodes", make_node("n1").dict())
    before = sim.revision
    same = await sim.update("nodes", created)
    assert sim.revision == before
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_delete_removes_and_a_second_delete_is_not_found(sim: SimCluster) -> None:
    await sim.create("pods", make_pod("p").dict())
    await sim.delete("pods", "default", "p")
    assert sim.objects("pods") == []
    with pytest.raises(NotFoundError):
        await sim.delete("pods", "default", "p")


async def test_list_filters_by_namespace_and_sorts_by_key(sim: SimCluster) -> None:
    for namespace, name in [("b", "z"), ("a", "y"), ("b", "a")]:
        await sim.create("pods", make_pod(name, namespace=namespace).dict())
    everything = await sim.list("pods")
    keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in everything.items]
    assert keys == [("a", "y"), ("b", "a"), ("b", "z")]
    assert everything.resource_version == str(sim.revision)
    in_b = await sim.list("pods", namespace="b")
    assert [p["metadata"]["name"] for p in in_b.items] == ["a", "z"]


async def test_cluster_scoped_objects_ignore_a_namespace(sim: SimCluster) -> None:
    raw = make_node("n1").dict()
    raw["metadata"]["namespace"] = "default"
    created = await sim.create("nodes", raw)
    assert "namespace" not in created["metadata"]
    assert (await sim.get("nodes", "", "n1"))["metadata"]["name"] == "n1"


async def test_an_object_with_finalizers_is_only_marked_until_the_last_one_goes(
    sim: SimCluster, clock: FakeClock
) -> None:
    raw = make_pod("held").dict()
    raw["metadata"]["finalizers"] = ["example.com/keep", "example.com/other"]
    await sim.create("pods", raw)
    clock.advance(7)
    await sim.delete("pods", "default", "held")
    marked = await sim.get("pods", "default", "held")
    assert marked["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:07Z"
    # A second delete changes nothing; the mark stays as first written.
    clock.advance(3)
    await sim.delete_pod("default", "held")
    assert (await sim.get("pods", "default", "held")) == marked
    await sim.patch_object(
        "pods", "default", "held", {"metadata": {"finalizers": ["example.com/other"]}}
    )
    assert (await sim.get("pods", "default", "held"))["metadata"]["deletionTimestamp"]
    current = await sim.get("pods", "default", "held")
    current["metadata"]["finalizers"] = []
    await sim.update("pods", current)
    with pytest.raises(NotFoundError):
        await sim.get("pods", "default", "held")
