"""Leases under optimistic concurrency, Events, loading manifests and injected faults."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cluster.sim import SimCluster
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_node
from scheduler.testing import make_pod

LEASE = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "kube-pyscheduler", "namespace": "kube-system"},
    "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
}


async def test_only_one_of_two_contenders_takes_a_lease(sim: SimCluster) -> None:
    await sim.create("leases", LEASE)
    seen_by_a = await sim.get("leases", "kube-system", "kube-pyscheduler")
    seen_by_b = await sim.get("leases", "kube-system", "kube-pyscheduler")
    seen_by_a["spec"]["holderIdentity"] = "a"
    seen_by_a["spec"]["renewTime"] = "2026-01-01T00:00:10.000000Z"
    seen_by_b["spec"]["holderIdentity"] = "b"
    await sim.update("leases", seen_by_a)
    with pytest.raises(ConflictError, match=r'leases.coordination.k8s.io "kube-pyscheduler"'):
        await sim.update("leases", seen_by_b)
    # b re-reads and sees a's renewal.
    fresh = await sim.get("leases", "kube-system", "kube-pyscheduler")
    assert fresh["spec"]["renewTime"] == "2026-01-01T00:00:10.000000Z"


async def test_creating_a_held_lease_conflicts(sim: SimCluster) -> None:
    await sim.create("leases", LEASE)
    with pytest.raises(ConflictError):
        await sim.create("leases", LEASE)


def scheduled_event(pod: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-host",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": "team", "name": pod, "apiVersion": "v1"},
        "note": f"Successfully assigned team/{pod} to {node}",
    }


async def test_events_are_stored_in_order_and_queryable(sim: SimCluster) -> None:
    await sim.create_event(scheduled_event("a", "n1"))
    await sim.create_event(scheduled_event("b", "n2"))
    await sim.create_event(scheduled_event("a", "n3"))
    assert [e["note"] for e in sim.events()] == [
        "Successfully assigned team/a to n1",
        "Successfully assigned team/b to n2",
        "Successfully assigned team/a to n3",
    ]
    about_a = sim.events("team/a")
    assert [e["note"][-2:] for e in about_a] == ["n1", "n3"]
    assert all(e["metadata"]["namespace"] == "team" for e in about_a)
    assert len({e["metadata"]["name"] for e in sim.events()}) == 3
    assert all(e["metadata"]["name"].startswith("a.") for e in about_a)


async def test_events_about_cluster_scoped_objects_use_the_bare_name(sim: SimCluster) -> None:
    event = scheduled_event("x", "n1")
    event["regarding"] = {"kind": "Node", "name": "n1", "apiVersion": "v1"}
    await sim.create_event(event)
    assert len(sim.events("n1")) == 1
    assert sim.events("default/n1") == []
    assert sim.events()[0]["metadata"]["namespace"] == "default"


async def test_events_can_be_watched(sim: SimCluster) -> None:
    mark = str(sim.revision)
    await sim.create_event(scheduled_event("a", "n1"))
    stream = sim.watch("events", resource_version=mark)
    first = await anext(stream)
    assert (first.type, first.object["reason"]) == ("ADDED", "Scheduled")
    await stream.aclose()  # type: ignore[attr-defined]


def test_load_maps_kinds_to_resources(sim: SimCluster) -> None:
    manifests: list[dict[str, Any]] = [
        make_node("n1").dict(),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        make_pod("p", namespace="team").dict(),
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "pdb", "namespace": "team"},
            "spec": {"minAvailable": 1},
        },
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "gang", "namespace": "team"},
            "spec": {"minMember": 3},
        },
    ]
    loaded = sim.load(manifests)
    assert [o["kind"] for o in loaded] == [
        "Node",
        "Namespace",
        "Pod",
        "PodDisruptionBudget",
        "PodGroup",
    ]
    assert [p["metadata"]["name"] for p in sim.objects("podgroups")] == ["gang"]
    assert [p["metadata"]["name"] for p in sim.objects("poddisruptionbudgets")] == ["pdb"]
    assert "team" in {ns["metadata"]["name"] for ns in sim.objects("namespaces")}


def test_load_names_an_object_of_unknown_kind(sim: SimCluster) -> None:
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "ns"},
    }
    with pytest.raises(ValueError, match=r"cannot load Widget ns/w1 \(apiVersion example.com/v1\)"):
        sim.load([make_node("n1").dict(), widget])


async def test_fail_next_raises_once_for_that_verb_and_resource(sim: SimCluster) -> None:
    pod = Pod.from_dict(await sim.create("pods", make_pod("p").dict()))
    sim.fail_next("bind", "pods", ConflictError("injected"))
    sim.fail_next("list", "nodes", APIError(500, "etcd unavailable"))
    await sim.list("pods")  # other resources are unaffected
    with pytest.raises(APIError, match="etcd unavailable"):
        await sim.list("nodes")
    await sim.list("nodes")
    with pytest.raises(ConflictError, match="injected"):
        await sim.bind(pod, "n1")
    assert (await sim.get("pods", "default", "p"))["spec"].get("nodeName") is None
    await sim.bind(pod, "n1")
    assert (await sim.get("pods", "default", "p"))["spec"]["nodeName"] == "n1"


@pytest.mark.parametrize(
    ("verb", "resource", "call"),
    [
        ("get", "pods", lambda s: s.get("pods", "default", "p")),
        ("create", "events", lambda s: s.create_event({"regarding": {"name": "p"}})),
        ("patch", "pods", lambda s: s.patch_pod_status("default", "p", {"message": "m"})),
        ("delete", "pods", lambda s: s.delete_pod("default", "p")),
        ("update", "pods", lambda s: s.update("pods", make_pod("p").dict())),
        ("watch", "pods", lambda s: anext(s.watch("pods", resource_version="1"))),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
async def test_fail_next_covers_each_verb(
    sim: SimCluster, verb: str, resource: str, call: Any
) -> None:
    await sim.create("pods", make_pod("p").dict())
    sim.fail_next(verb, resource, APIError(503, f"{verb} down"))
    with pytest.raises(APIError, match=f"{verb} down"):
        await call(sim)


def test_fail_next_rejects_an_unknown_verb(sim: SimCluster) -> None:
    with pytest.raises(ValueError, match="unknown verb 'explode'"):
        sim.fail_next("explode", "pods", NotFoundError("x"))


async def test_timestamps_follow_the_injected_clock(sim: SimCluster, clock: FakeClock) -> None:
    clock.advance(90)
    node = await sim.create("nodes", make_node("n1").dict())
    assert node["metadata"]["creationTimestamp"] == "2026-01-01T00:01:30Z"


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        pytest.param(
            "note",
            "ノ" * 342,
            'message: Invalid value: "": can have at most 1024 characters',
            id="note-over-1024-bytes",
        ),
        pytest.param(
            "reason", "R" * 129, 'reason: Invalid value: "": can have at most 128 characters'
        ),
        pytest.param("action", "", "action: Required value"),
    ],
)
async def test_an_event_the_api_server_refuses_is_refused_and_not_stored(
    sim: SimCluster, field: str, value: str, error: str
) -> None:
    event = scheduled_event("a", "n1")
    event[field] = value
    with pytest.raises(APIError) as refused:
        await sim.create_event(event)
    assert refused.value.status == 422
    assert refused.value.text.endswith(f" is invalid: {error}")
    assert sim.events("team/a") == []
