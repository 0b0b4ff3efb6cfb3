"""IPAllocation in the whole scheduler against the in-memory API server: distinct addresses,
pool exhaustion and release, a conflicting writer, a failed PreBind, and a restart that finds
the pools' status ahead of or behind the pods."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.ip_allocation import ADDRESS
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness
from tests.ip_pools import allocations_of
from tests.ip_pools import carried
from tests.ip_pools import ip_pool
from tests.ip_pools import network_annotation

CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "IPAllocation"}]}},
            "pluginConfig": [{"name": "IPAllocation", "args": {"reconcileIntervalSeconds": 5}}],
        }
    ]
}
NODES = [make_node(f"n{i}").zone("a" if i < 2 else "b").dict() for i in range(3)]


def annotated_pod(name: str, network: str = "pods", **extra: str) -> dict[str, Any]:
    builder = make_pod(name)
    for key, value in {**network_annotation(network), **extra}.items():
        builder.annotation(key, value)
    return builder.dict()


def pools(h: Harness) -> dict[tuple[str, str], str]:
    return allocations_of(h.sim.objects("ippools"))


def conflicts(h: Harness) -> float:
    found = h.scheduler.metrics.registry.get_sample_value(
        "kube_pyscheduler_plugin_ip_pool_write_conflicts_total", {"profile": "default-scheduler"}
    )
    return found or 0.0


async def after_backoff(h: Harness) -> None:
    """Let the backoff of every retried pod run out, as the scheduling loop would."""
    await h.quiesce()
    h.clock.advance(10)
    h.scheduler.queue.flush_backoff_completed()


def pod_uid(h: Harness, name: str) -> str:
    return str(h.pod("default", name)["metadata"]["uid"])


def assert_consistent(h: Harness) -> None:
    """Every allocation belongs to a live pod, every annotated bound pod's address is allocated
    to it, and no address is held twice."""
    allocated = pools(h)
    live = {p["metadata"]["uid"]: p for p in h.sim.objects("pods")}
    assert set(allocated.values()) <= set(live)
    assert len(set(allocated.values())) == len(allocated)
    for uid, pod in live.items():
        where = carried(pod)
        if pod["spec"].get("nodeName") and where is not None:
            assert allocated.get(where) == uid


async def test_every_pod_gets_its_own_address_until_the_pool_runs_out() -> None:
    async with Harness(CONFIG) as h:
        # A /28 has 14 host addresses; two are excluded.
        h.create([*NODES, ip_pool("p", "10.1.0.0/28", exclude=["10.1.0.1", "10.1.0.8/31"])])
        h.create([annotated_pod(f"web-{i}") for i in range(13)])
        assert await h.schedule_active() == 13
        placed = [f"web-{i}" for i in range(13) if h.node_of("default", f"web-{i}")]
        assert len(placed) == 11
        addresses = {carried(h.pod("default", name)) for name in placed}
        assert len(addresses) == 11
        assert not {("p", "10.1.0.1"), ("p", "10.1.0.8"), ("p", "10.1.0.9")} & addresses
        # PreBind had an address to write for each: each was nominated to its node first.
        for name in placed:
            status = h.pod("default", name)["status"]
            assert status["nominatedNodeName"] == h.node_of("default", name)
        assert_consistent(h)
        waiting = next(f"web-{i}" for i in range(13) if f"web-{i}" not in placed)
        assert 'every IPPool of network "pods" is out of addresses' in h.scheduled_message(
            "default", waiting
        )

        # A deleted pod's address comes back at the next reconcile, which brings a waiting pod
        # back (IPPool update) to take it.
        gone = h.pod("default", placed[0])
        await h.sim.delete_pod("default", placed[0])
        await h.quiesce()
        h.clock.advance(5)
        await h.quiesce()
        assert carried(gone) not in pools(h)
        await after_backoff(h)
        assert await h.schedule_active() >= 1
        left = [f"web-{i}" for i in range(13) if f"web-{i}" != placed[0]]
        assert sum(1 for name in left if h.node_of("default", name)) == 11
        # One of the two waiting pods took the address given back.
        taker = [name for name in left if name not in placed and h.node_of("default", name)]
        assert [carried(h.pod("default", name)) for name in taker] == [carried(gone)]
        assert_consistent(h)


async def test_pods_without_the_annotation_are_left_alone() -> None:
    async with Harness(CONFIG) as h:
        h.create([*NODES, make_pod("plain").dict()])
        assert await h.schedule_active() == 1
        assert h.node_of("default", "plain")
        assert ADDRESS not in (h.pod("default", "plain")["metadata"].get("annotations") or {})
        assert "nominatedNodeName" not in (h.pod("default", "plain").get("status") or {})


async def test_no_pool_for_the_network_keeps_the_pod_waiting_until_one_appears() -> None:
    async with Harness(CONFIG) as h:
        h.create([*NODES, annotated_pod("web", network="storage")])
        assert await h.schedule_active() == 1
        assert 'no IPPool serves network "storage"' in h.scheduled_message("default", "web")
        h.create([ip_pool("s", "10.2.0.0/30", network="storage")])
        await after_backoff(h)
        assert await h.schedule_active() == 1
        assert carried(h.pod("default", "web")) == ("s", "10.2.0.1")


async def test_node_and_zone_pools_serve_only_their_nodes() -> None:
    async with Harness(CONFIG) as h:
        h.create(
            [
                *NODES,
                ip_pool("only-n2", "10.3.0.0/30", node_name="n2"),
                ip_pool("zone-b", "10.4.0.0/30", zone="b"),
            ]
        )
        h.create([annotated_pod(f"web-{i}") for i in range(3)])
        assert await h.schedule_active() == 3
        # Only n2 (zone b) is served: two addresses per pool, the third pod on n2 as well.
        assert {h.node_of("default", f"web-{i}") for i in range(3)} == {"n2"}
        assert {carried(h.pod("default", f"web-{i}"))[0] for i in range(3)} == {  # type: ignore[index]
            "only-n2",
            "zone-b",
        }
        assert_consistent(h)


async def test_a_write_conflict_re_reads_the_pool_and_another_writers_address_is_not_used() -> None:
    async with Harness(CONFIG) as h:
        h.create([*NODES, ip_pool("p", "10.5.0.0/29"), annotated_pod("web")])
        await h.quiesce()
        before = conflicts(h)
        info = h.scheduler.queue.pop()
        assert info is not None
        h.scheduler.schedule_one(info)
        # Between Reserve (which chose 10.5.0.1) and PreBind, someone else takes it; and
        # PreBind's first write is refused as stale, as when another write lands in between.
        await h.sim.patch_object(
            "ippools",
            "",
            "p",
            {"status": {"allocations": {"10.5.0.1": {"uid": "other", "pod": "x/other"}}}},
        )
        h.sim.fail_next("patch", "ippools", ConflictError("the object has been modified"))
        await h.quiesce()
        assert carried(h.pod("default", "web")) == ("p", "10.5.0.2")
        assert conflicts(h) == before + 1
        assert pools(h) == {("p", "10.5.0.1"): "other", ("p", "10.5.0.2"): pod_uid(h, "web")}


@pytest.mark.parametrize("fail", ["pod-patch", "pool-patch"])
async def test_a_failed_prebind_releases_the_address_and_the_pod_is_retried(fail: str) -> None:
    async with Harness(CONFIG) as h:
        h.create([*NODES, ip_pool("p", "10.6.0.0/29"), annotated_pod("web")])
        await h.quiesce()
        if fail == "pod-patch":
            # The first patch of the pod is its nomination, whose failure is only logged; the
            # second, the address annotation, fails PreBind.
            h.sim.fail_next("patch", "pods", APIError(500, "etcd is unhappy"))
            h.sim.fail_next("patch", "pods", APIError(500, "etcd is unhappy"))
        else:
            h.sim.fail_next("patch", "ippools", APIError(500, "etcd is unhappy"))
        assert await h.schedule_active() == 1
        assert h.node_of("default", "web") is None
        await h.settle_until(lambda: pools(h) == {})
        (note,) = h.event_notes("default", "web", "IPAllocationFailed")
        assert "IPPool 'p'" in note and "etcd is unhappy" in note
        assert "etcd is unhappy" in h.scheduled_message("default", "web")
        # One backoff, then it succeeds.
        await after_backoff(h)
        assert await h.schedule_active() == 1
        assert carried(h.pod("default", "web")) == ("p", "10.6.0.1")
        assert pools(h) == {("p", "10.6.0.1"): pod_uid(h, "web")}


async def test_at_start_the_pools_are_reconciled_against_the_pods() -> None:
    bound = make_pod("bound").node("n0").uid("uid-bound")
    for key, value in {
        **network_annotation(),
        "ip-allocation.kube-pyscheduler.io/pool": "p",
        ADDRESS: "10.7.0.1",
    }.items():
        bound.annotation(key, value)
    # Written by a scheduler that stopped between its pool write and the pod's annotation.
    pending = make_pod("pending").uid("uid-pending")
    pending.annotation(*next(iter(network_annotation().items())))
    allocations = {
        "10.7.0.1": {"uid": "uid-bound", "pod": "default/bound"},
        "10.7.0.2": {"uid": "uid-gone", "pod": "default/gone"},
        "10.7.0.3": {"uid": "uid-pending", "pod": "default/pending"},
        # Bound, but its annotation names another address: left over from a lost race.
        "10.7.0.4": {"uid": "uid-bound", "pod": "default/bound"},
    }
    kept = {("p", "10.7.0.1"): "uid-bound", ("p", "10.7.0.3"): "uid-pending"}
    h = Harness(CONFIG)
    # All there before this scheduler starts, as a stopped one left them.
    h.create([*NODES, ip_pool("p", "10.7.0.0/29", allocations=allocations)])
    h.create([bound.dict(), pending.dict()])
    async with h:
        # Released as the scheduler starts to schedule, before any pod has been tried.
        await h.settle_until(lambda: pools(h) == kept)
        assert await h.schedule_active() == 1
        await h.quiesce()
        # The pending pod took the address it already owned.
        assert carried(h.pod("default", "pending")) == ("p", "10.7.0.3")
        assert pools(h) == kept
        assert_consistent(h)


async def test_an_unusable_pool_is_named_in_the_pods_message() -> None:
    async with Harness(CONFIG) as h:
        h.create([*NODES, ip_pool("broken", "10.8.0.0/33"), annotated_pod("web")])
        assert await h.schedule_active() == 1
        message = h.scheduled_message("default", "web")
        assert 'IPPool "broken": spec.cidrs[0]' in message, message
