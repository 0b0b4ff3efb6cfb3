"""IPAllocation's parts: pools read strictly, addresses chosen, pool writes under conflicts,
leftovers found, args and hints."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Awaitable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import ValidationError

from plugins.ip_allocation import SPEC
from plugins.ip_allocation import IPAllocation
from plugins.ip_allocation import IPAllocationArgs
from plugins.ip_allocation.hints import after_pool_changed
from plugins.ip_allocation.ledger import Held
from plugins.ip_allocation.ledger import Ledger
from plugins.ip_allocation.ledger import choose_address
from plugins.ip_allocation.metrics import IPAllocationCounts
from plugins.ip_allocation.pool import IPPool
from plugins.ip_allocation.pool import PoolError
from plugins.ip_allocation.pool import parse_pool
from plugins.ip_allocation.reconcile import leftovers
from plugins.ip_allocation.writes import OUTCOME_POLL_CAP_SECONDS
from plugins.ip_allocation.writes import PoolWriteError
from plugins.ip_allocation.writes import PoolWriter
from plugins.ip_allocation.writes import WriteContext
from scheduler.cluster.sim import SimCluster
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import PreBindPlugin
from scheduler.framework import QueueingHint
from scheduler.framework import ReservePlugin
from scheduler.framework.errors import ConflictError
from scheduler.testing import FakeClock
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from tests.ip_pools import ip_pool
from tests.ip_pools import network_annotation


def pool_of(*cidrs: str, **kwargs: Any) -> IPPool:
    return parse_pool(ip_pool("p", *cidrs, **kwargs))


def test_spec() -> None:
    assert SPEC.name == "IPAllocation"
    assert SPEC.extension_points == ["PreFilter", "Filter", "Reserve", "PreBind"]
    assert SPEC.watches == ("ippools",)
    plugin = IPAllocation(None, FakeHandle())
    assert isinstance(plugin, ReservePlugin) and isinstance(plugin, PreBindPlugin)
    assert isinstance(plugin, BatchFilterPlugin)
    resources = {r.event.resource for r in plugin.events_to_register()}
    assert resources == {EventResource.IP_POOL, EventResource.NODE}


def test_args_are_checked_with_their_field_names() -> None:
    args = IPAllocationArgs.model_validate(
        {"maxConflictRetries": 3, "reconcileIntervalSeconds": 2.5}
    )
    assert (args.max_conflict_retries, args.reconcile_interval_seconds) == (3, 2.5)
    for bad, field in [
        ({"maxConflictRetries": 0}, "maxConflictRetries"),
        ({"reconcileIntervalSeconds": 0}, "reconcileIntervalSeconds"),
        ({"retries": 3}, "retries"),
    ]:
        with pytest.raises(ValidationError, match=field):
            IPAllocationArgs.model_validate(bad)


@given(
    prefix=st.integers(min_value=22, max_value=32),
    excluded=st.lists(st.tuples(st.integers(0, 1023), st.integers(26, 32)), max_size=4),
    v6=st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_the_address_scan_agrees_with_the_standard_library(
    prefix: int, excluded: list[tuple[int, int]], v6: bool
) -> None:
    base = "fd00::" if v6 else "10.0.0.0"
    prefix = prefix + 96 if v6 else prefix
    cidr = ipaddress.ip_network(f"{base}/{prefix}")
    nets = [
        ipaddress.ip_network(
            f"{ipaddress.ip_address(int(cidr.network_address) + offset)}/"
            f"{bits + 96 if v6 else bits}",
            strict=False,
        )
        for offset, bits in excluded
    ]
    pool = pool_of(str(cidr), exclude=[str(n) for n in nets])
    expected = [str(a) for a in cidr.hosts() if not any(a in n for n in nets)]
    assert list(pool.addresses()) == expected
    for address in expected[:3]:
        assert pool.gives(int(ipaddress.ip_address(address)))


def test_a_pool_gives_host_addresses_less_the_excluded() -> None:
    pool = pool_of("10.0.0.0/29", "10.0.1.0/31", exclude=["10.0.0.2", "10.0.0.4/31"])
    assert list(pool.addresses()) == ["10.0.0.1", "10.0.0.3", "10.0.0.6", "10.0.1.0", "10.0.1.1"]
    assert list(pool_of("fd00::/126").addresses()) == ["fd00::1", "fd00::2", "fd00::3"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"cidrs": ["10.0.0.0/24"]}, r"spec\.network: required"),
        ({"network": "n"}, r"spec\.cidrs: needs at least one CIDR"),
        ({"network": "n", "cidrs": ["10.0.0.1/24"]}, r"spec\.cidrs\[0\]: .*host bits set"),
        ({"network": "n", "cidrs": [24]}, r"spec\.cidrs\[0\]: must be a CIDR string"),
        ({"network": "n", "cidrs": ["10.0.0.0/24"], "exclude": "10.0.0.1"}, r"spec\.exclude:"),
        ({"network": "n", "cidrs": ["10.0.0.0/24"], "exclude": ["x"]}, r"spec\.exclude\[0\]"),
        ({"network": "n", "cidrs": ["10.0.0.0/24"], "zone": 3}, r"spec\.zone: must be a string"),
    ],
)
def test_an_unusable_pool_is_refused_naming_the_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(PoolError, match=rf'IPPool "bad": {message}'):
        parse_pool({"metadata": {"name": "bad"}, "spec": spec})


def test_a_pool_serves_its_node_or_zone_only() -> None:
    zone = {"topology.kubernetes.io/zone": "a"}
    assert pool_of("10.0.0.0/30").serves("n1", {})
    assert pool_of("10.0.0.0/30", node_name="n1").serves("n1", {})
    assert not pool_of("10.0.0.0/30", node_name="n1").serves("n2", {})
    assert pool_of("10.0.0.0/30", zone="a").serves("n2", zone)
    assert not pool_of("10.0.0.0/30", zone="b").serves("n2", zone)


def test_the_choice_prefers_what_the_pod_owns_then_the_preferred_then_the_first_free() -> None:
    allocations = {"10.0.0.1": {"uid": "u1", "pod": "d/a"}}
    pool = pool_of("10.0.0.0/29", allocations=allocations)
    assert choose_address(pool, set(), "u1", preferred="10.0.0.5") == "10.0.0.1"
    assert choose_address(pool, set(), "u2") == "10.0.0.2"
    assert choose_address(pool, {"10.0.0.2"}, "u2") == "10.0.0.3"
    assert choose_address(pool, set(), "u2", preferred="10.0.0.5") == "10.0.0.5"
    # A preferred address someone took gives way to the first free one.
    assert choose_address(pool, {"10.0.0.5"}, "u2", preferred="10.0.0.5") == "10.0.0.2"
    full = pool_of("10.0.0.0/30", allocations=allocations)
    assert choose_address(full, {"10.0.0.2"}, "u2") is None


def test_the_ledger_counts_holds_until_the_status_shows_them() -> None:
    ledger = Ledger()
    ledger.hold(Held("p", "10.0.0.1", "u1"))
    ledger.hold(Held("p", "10.0.0.2", "u2", persisted=True))
    ledger.hold(Held("q", "10.0.0.1", "u3", persisted=True))
    assert ledger.taken_in("p") == {"10.0.0.1", "10.0.0.2"}
    assert ledger.taken_in("p", besides="u1") == {"10.0.0.2"}
    shown = {"10.0.0.1": {"uid": "u1", "pod": ""}, "10.0.0.2": {"uid": "u2", "pod": ""}}
    ledger.forget_confirmed(pool_of("10.0.0.0/29", allocations=shown))
    # u1 is not persisted yet (its write may still fail); u3 is another pool's.
    assert ledger.held_by("u2") is None
    assert len(ledger) == 2


def _pod(uid: str, node: str = "", carried: tuple[str, str] | None = None) -> dict[str, Any]:
    builder = make_pod(uid).uid(uid)
    if node:
        builder.node(node)
    if carried is not None:
        builder.annotation("ip-allocation.kube-pyscheduler.io/pool", carried[0])
        builder.annotation("ip-allocation.kube-pyscheduler.io/address", carried[1])
    return builder.dict()


def test_leftovers_are_allocations_no_live_pod_uses() -> None:
    allocations = {
        "10.0.0.1": {"uid": "bound", "pod": ""},
        "10.0.0.2": {"uid": "gone", "pod": ""},
        "10.0.0.3": {"uid": "pending", "pod": ""},
        "10.0.0.4": {"uid": "bound", "pod": ""},
        "10.0.0.5": {"uid": "in-flight", "pod": ""},
    }
    pods = {
        "bound": _pod("bound", "n1", ("p", "10.0.0.1")),
        "pending": _pod("pending"),
    }
    found = leftovers([pool_of("10.0.0.0/29", allocations=allocations)], pods, {"in-flight"})
    assert [(x.address, x.reason) for x in found] == [
        ("10.0.0.2", "pod gone"),
        ("10.0.0.4", "pod runs without it"),
    ]


class CountingAPI:
    """The in-memory API server, counting pool writes; another writer takes the address each
    of the first `conflicts` writes chose, just before that write lands."""

    def __init__(self, sim: SimCluster, conflicts: int = 0) -> None:
        self.sim = sim
        self.conflicts = conflicts
        self.writes = 0

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        await asyncio.sleep(0)  # a request takes a turn of the loop, as over the network
        return await self.sim.get(resource, namespace, name)

    async def patch_object(
        self, resource: str, namespace: str, name: str, patch: Any, subresource: str = ""
    ) -> None:
        await asyncio.sleep(0)
        self.writes += 1
        if self.conflicts:
            self.conflicts -= 1
            taken = {
                a: {"uid": f"other-{self.writes}", "pod": "x/y"}
                for a in patch["status"]["allocations"]
            }
            await self.sim.patch_object(
                resource, namespace, name, {"status": {"allocations": taken}}
            )
        await self.sim.patch_object(resource, namespace, name, patch, subresource)


def writer_over(
    api: Any, clock: FakeClock, retries: int = 5, held: set[str] | None = None
) -> PoolWriter:
    context = WriteContext(
        api, clock, lambda pool, uid: set(held or ()), retries, IPAllocationCounts("test")
    )
    return PoolWriter(context, "p")


def sim_with_pool(**kwargs: Any) -> SimCluster:
    sim = SimCluster(clock=FakeClock())
    sim.load([ip_pool("p", "10.0.0.0/29", **kwargs)])
    return sim


async def stored(sim: SimCluster) -> dict[str, Any]:
    found: dict[str, Any] = (
        (await sim.get("ippools", "", "p")).get("status", {}).get("allocations", {})
    )
    return found


async def drive(clock: FakeClock, *work: Awaitable[Any]) -> list[Any]:
    """Run `work` together; waiters look for their outcome on the clock, so move it on."""
    tasks = [asyncio.ensure_future(w) for w in work]
    for _ in range(1000):
        await asyncio.sleep(0)
        if all(t.done() for t in tasks):
            break
        clock.advance(OUTCOME_POLL_CAP_SECONDS)
    return await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_conflict_re_reads_the_pool_and_picks_again() -> None:
    sim = sim_with_pool()
    api = CountingAPI(sim, conflicts=2)
    clock = FakeClock()
    assert await writer_over(api, clock).allocate("u1", "d/a", "") == "10.0.0.3"
    allocations = await stored(sim)
    assert allocations["10.0.0.3"] == {"uid": "u1", "pod": "d/a"}
    assert {allocations[a]["uid"] for a in ("10.0.0.1", "10.0.0.2")} == {"other-1", "other-2"}


async def test_conflicts_past_the_budget_give_up() -> None:
    api = CountingAPI(sim_with_pool(), conflicts=3)
    with pytest.raises(PoolWriteError, match="changed under 3 attempts"):
        await writer_over(api, FakeClock(), retries=3).allocate("u1", "d/a", "")


async def test_concurrent_allocations_are_written_together_and_never_collide() -> None:
    sim = sim_with_pool()
    api = CountingAPI(sim)
    clock = FakeClock()
    writer = writer_over(api, clock, held={"10.0.0.1"})
    results = await drive(clock, *(writer.allocate(f"u{i}", f"d/p{i}", "") for i in range(6)))
    # Six host addresses, one held by a pod of ours in flight elsewhere: five fit.
    addresses = [r for r in results if isinstance(r, str)]
    assert sorted(addresses) == [f"10.0.0.{i}" for i in range(2, 7)]
    [exhausted] = [r for r in results if isinstance(r, PoolWriteError)]
    assert "has no free address" in str(exhausted)
    # The first write went alone; the other five waited and went in one patch.
    assert api.writes == 2
    assert {v["uid"] for v in (await stored(sim)).values()} == {f"u{i}" for i in range(5)}


async def test_an_allocation_already_in_the_status_is_not_written_again() -> None:
    api = CountingAPI(sim_with_pool(allocations={"10.0.0.4": {"uid": "u1", "pod": "d/a"}}))
    assert await writer_over(api, FakeClock()).allocate("u1", "d/a", "10.0.0.2") == "10.0.0.4"
    assert api.writes == 0


async def test_an_exhausted_pool_is_said_so() -> None:
    allocations = {f"10.0.0.{i}": {"uid": f"u{i}", "pod": ""} for i in range(1, 7)}
    api = CountingAPI(sim_with_pool(allocations=allocations))
    with pytest.raises(PoolWriteError, match='IPPool "p" has no free address'):
        await writer_over(api, FakeClock()).allocate("new", "d/a", "")


async def test_a_release_removes_only_the_same_pods_allocation() -> None:
    allocations = {"10.0.0.1": {"uid": "u1", "pod": ""}, "10.0.0.2": {"uid": "u2", "pod": ""}}
    sim = sim_with_pool(allocations=allocations)
    writer = writer_over(CountingAPI(sim), FakeClock())
    assert await writer.release("u1", "10.0.0.1")
    assert not await writer.release("u1", "10.0.0.2")
    assert not await writer.release("u1", "10.0.0.9")
    assert await stored(sim) == {"10.0.0.2": {"uid": "u2", "pod": ""}}
    gone = PoolWriter(
        WriteContext(sim, FakeClock(), lambda p, u: set(), 3, IPAllocationCounts("test")), "gone"
    )
    assert not await gone.release("u1", "10.0.0.1")
    with pytest.raises(PoolWriteError, match='IPPool "gone" no longer exists'):
        await gone.allocate("u1", "d/a", "")


async def test_a_stale_view_is_refused_by_the_server() -> None:
    sim = sim_with_pool()
    stale = parse_pool(await sim.get("ippools", "", "p"))
    await sim.patch_object("ippools", "", "p", {"metadata": {"labels": {"touched": "yes"}}})
    patch = {"metadata": {"resourceVersion": stale.resource_version}, "status": {}}
    with pytest.raises(ConflictError):
        await sim.patch_object("ippools", "", "p", patch)


def test_filter_per_node_and_over_rows_agree_on_which_nodes_pools_serve() -> None:
    nodes = [
        make_node("a1").zone("a"),
        make_node("a2").zone("a"),
        make_node("b1").zone("b"),
        make_node("c1").zone("c"),
        make_node("bare"),
    ]
    table = build_table([n.obj() for n in nodes])
    cases: list[tuple[list[dict[str, Any]], list[str]]] = [
        ([ip_pool("z", "10.0.0.0/30", zone="b")], ["b1"]),
        ([ip_pool("n", "10.0.0.0/30", node_name="a2")], ["a2"]),
        # Node and zone together: the node only while it is in the zone.
        ([ip_pool("both", "10.0.0.0/30", node_name="a1", zone="b")], []),
        ([ip_pool("both", "10.0.0.0/30", node_name="c1", zone="c")], ["c1"]),
        (
            [ip_pool("z", "10.0.0.0/30", zone="a"), ip_pool("n", "10.1.0.0/30", node_name="bare")],
            ["a1", "a2", "bare"],
        ),
        ([ip_pool("all", "10.0.0.0/30")], ["a1", "a2", "b1", "c1", "bare"]),
    ]
    pod = make_pod("web").annotation(*next(iter(network_annotation().items()))).obj()
    for pools, served in cases:
        plugin = IPAllocation(None, FakeHandle(table, listers={"ippools": pools}))
        state = CycleState()
        _, status = plugin.pre_filter(state, pod, table)
        assert status.is_success
        each = filter_each_node(plugin, state, pod, table)
        batch = filter_batch_as_statuses(plugin, state, pod, table)
        assert each == batch
        passed = [table.node_infos[r].name for r in range(table.size) if each[r].is_success]
        assert passed == served, pools
        rejected = [s for s in each if not s.is_success]
        assert all(s.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE for s in rejected)


def test_a_pool_event_helps_pods_of_its_network_only() -> None:
    pod = make_pod("web").annotation(*next(iter(network_annotation("blue").items()))).obj()
    assert after_pool_changed(pod, None, ip_pool("p", "10.0.0.0/30", network="blue")) is (
        QueueingHint.QUEUE
    )
    assert after_pool_changed(pod, None, ip_pool("p", "10.0.0.0/30", network="red")) is (
        QueueingHint.QUEUE_SKIP
    )
    assert after_pool_changed(pod, ip_pool("p", "10.0.0.0/30"), None) is QueueingHint.QUEUE_SKIP
