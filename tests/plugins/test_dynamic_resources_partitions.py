"""Partitionable devices, per-device node selection and unusable pools in DynamicResources,
with kube-scheduler v1.36's outcomes and texts."""

from __future__ import annotations

from typing import Any

from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import StateData
from scheduler.framework import Code
from scheduler.framework import Pod
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import consuming
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_counter_slice
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import with_claims
from tests.plugins.dra_world import CLASS
from tests.plugins.dra_world import DRIVER
from tests.plugins.dra_world import World
from tests.plugins.dra_world import outcome
from tests.plugins.dra_world import unresolvable

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
CANNOT_ALLOCATE = unresolvable("cannot allocate all claims")
# One 40Gi GPU, published whole or as two halves that share its memory.
COUNTERS = make_counter_slice("worker-counters", DRIVER, "worker", {"gpu-0": {"memory": "40Gi"}})
WHOLE = consuming(device("gpu-0-whole", profile="whole"), "gpu-0", memory="40Gi")
HALVES = [
    consuming(device(f"gpu-0-half-{i}", profile="half"), "gpu-0", memory="20Gi") for i in (1, 2)
]
PARTITIONS = make_slice("worker-gpus", DRIVER, [WHOLE, *HALVES], node="worker", slice_count=2)


def pod_using(*claims: str) -> Pod:
    raw = with_claims(make_pod("p").uid("pod-uid").dict(), claims={c: c for c in claims})
    return Pod.from_dict(raw)


def profile(name: str) -> tuple[str, ...]:
    return (f'device.attributes["{DRIVER}"].profile == "{name}"',)


def pending(name: str = "c", count: int = 1, **kw: Any) -> dict[str, Any]:
    return make_claim(name).request("req-1", CLASS, count, **kw).dict()


def holding(name: str, *devices: str) -> dict[str, Any]:
    """A claim of another workload that holds these devices of the worker's pool."""
    claim = make_claim(name).request("req-1", CLASS, len(devices))
    return claim.allocated("worker", *(("req-1", DRIVER, "worker", d) for d in devices)).dict()


def allocated_devices(world: World, pod: Pod, node: str = "worker") -> list[str]:
    data = world.reserve(pod, node).read(STATE_KEY, StateData)
    allocation = data.allocations["uid-claim-default-c"]
    return [r["device"] for r in allocation["devices"]["results"]]


def test_a_partition_is_given_while_its_counters_last() -> None:
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, pending(selectors=profile("half"))])
    assert allocated_devices(world, pod_using("c")) == ["gpu-0-half-1"]


def test_an_allocated_whole_device_leaves_no_partition_free() -> None:
    # Without counters, two halves would still look free: counting devices is not enough.
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, holding("other", "gpu-0-whole"), pending()])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE


def test_an_allocated_half_keeps_the_whole_device_out_but_not_the_other_half() -> None:
    taken = holding("other", "gpu-0-half-1")
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, taken, pending(selectors=profile("whole"))])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, taken, pending()])
    assert allocated_devices(world, pod_using("c")) == ["gpu-0-half-2"]


def test_the_search_backs_out_of_a_partition_that_starves_the_rest() -> None:
    # First fit takes the whole GPU, after which no second device fits: both halves do.
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, pending(count=2)])
    assert allocated_devices(world, pod_using("c")) == ["gpu-0-half-1", "gpu-0-half-2"]


def test_two_claims_of_one_pod_share_the_counters() -> None:
    whole = make_claim("c").request("req-1", CLASS, selectors=profile("whole")).dict()
    half = make_claim("d").request("req-1", CLASS, selectors=profile("half")).dict()
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, whole, half])
    _, statuses = world.filter(pod_using("c", "d"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE


def test_an_overdrawn_counter_shuts_out_every_consumer_of_its_pool() -> None:
    # The driver shrank the set below what allocated devices use; upstream then gives nothing
    # more from the pool, even devices that draw on another counter.
    counters = make_counter_slice(
        "worker-counters", DRIVER, "worker", {"gpu-0": {"memory": "10Gi", "engines": "2"}}
    )
    engine = consuming(device("gpu-0-engine", profile="engine"), "gpu-0", engines="1")
    slice_ = make_slice("worker-gpus", DRIVER, [*HALVES, engine], node="worker", slice_count=2)
    taken = holding("other", "gpu-0-half-1")
    world = World(
        [
            GPU_CLASS,
            counters,
            slice_,
            taken,
            pending(selectors=('device.attributes["gpu.example.com"].profile != "half"',)),
        ]
    )
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE


def test_admin_access_may_share_a_held_partition_but_not_overdraw_its_counters() -> None:
    taken = holding("other", "gpu-0-half-1")
    # Sharing the held half counts its memory again: 40Gi less 20Gi held leaves the 20Gi it needs.
    wanted = pending(admin_access=True, selectors=profile("half"))
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, taken, wanted])
    assert allocated_devices(world, pod_using("c")) == ["gpu-0-half-1"]
    # The whole GPU would need memory the held half uses, admin access or not.
    wanted = pending(admin_access=True, selectors=profile("whole"))
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, taken, wanted])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE


def test_a_device_drawing_on_an_undeclared_counter_makes_its_pool_invalid() -> None:
    broken = consuming(device("gpu-0"), "no-such-set", memory="1")
    slice_ = make_slice("worker-gpus", DRIVER, [broken], node="worker")
    world = World([GPU_CLASS, slice_, pending()])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == unresolvable("invalid resource pools were encountered")


def test_a_repeated_device_name_makes_its_pool_invalid_but_other_pools_still_serve() -> None:
    twice = make_slice(
        "worker-a", DRIVER, [device("gpu-0"), device("gpu-0")], node="worker", pool="a"
    )
    world = World([GPU_CLASS, twice, pending()])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == unresolvable("invalid resource pools were encountered")
    good = make_slice("worker-b", DRIVER, [device("gpu-9")], node="worker", pool="b")
    world = World([GPU_CLASS, twice, good, pending()])
    assert allocated_devices(world, pod_using("c")) == ["gpu-9"]


def test_a_pool_missing_its_counter_slice_is_not_given_from() -> None:
    world = World([GPU_CLASS, PARTITIONS, pending()])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE
    world = World([GPU_CLASS, PARTITIONS, pending(all_devices=True)])
    _, status = world.pre_filter(pod_using("c"))
    assert status.is_success
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == (
        Code.ERROR,
        "claim default/c, request req-1: asks for all devices, but resource pool "
        "gpu.example.com/worker is currently being updated",
    )


def test_all_devices_of_a_partitioned_gpu_overlap_and_cannot_all_be_given() -> None:
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, pending(all_devices=True)])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE
    halves = make_slice("worker-gpus", DRIVER, HALVES, node="worker", slice_count=2)
    world = World([GPU_CLASS, COUNTERS, halves, pending(all_devices=True)])
    assert allocated_devices(world, pod_using("c")) == ["gpu-0-half-1", "gpu-0-half-2"]


def test_a_constraint_that_rules_out_one_of_all_devices_is_an_error() -> None:
    mixed = make_slice(
        "worker-gpus",
        DRIVER,
        [device("gpu-0", model="a100"), device("gpu-1", model="t4")],
        node="worker",
    )
    claim = make_claim("c").request("req-1", CLASS, all_devices=True)
    claim.match_attribute(f"{DRIVER}/model")
    world = World([GPU_CLASS, mixed, claim.dict()])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == (
        Code.ERROR,
        "claim default/c, request req-1: cannot add device gpu.example.com/worker/gpu-1 "
        "because a claim constraint would not be satisfied",
    )


ZONE_A = {
    "nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    ]
}


def test_each_device_of_a_per_device_slice_is_where_it_says() -> None:
    devices = [
        {**device("local", profile="local"), "nodeName": "worker"},
        {**device("zonal", profile="zonal"), "nodeSelector": ZONE_A},
        {**device("anywhere", profile="anywhere"), "allNodes": True},
    ]
    slice_ = make_slice("fabric", DRIVER, devices, pool="fabric", per_device_nodes=True)
    labels = {"zoned": {"zone": "a"}}
    nodes = ("worker", "zoned", "elsewhere")
    for wanted, fitting in (
        ("local", {"worker"}),
        ("zonal", {"zoned"}),
        ("anywhere", set(nodes)),
    ):
        claim = pending(selectors=profile(wanted))
        world = World([GPU_CLASS, slice_, claim], nodes, labels=labels)
        _, statuses = world.filter(pod_using("c"))
        assert {n for n, s in statuses.items() if s.is_success} == fitting, wanted


def test_the_allocation_joins_the_selectors_of_its_devices() -> None:
    zone = make_slice("zonal", DRIVER, [device("gpu-z")], node_selector=ZONE_A, pool="zonal")
    rack_selector = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}
        ]
    }
    rack = make_slice(
        "racked", DRIVER, [device("gpu-r")], node_selector=rack_selector, pool="racked"
    )
    labels = {"worker": {"zone": "a", "rack": "r1"}}
    world = World([GPU_CLASS, zone, rack, pending(count=2)], labels=labels)
    data = world.reserve(pod_using("c"), "worker").read(STATE_KEY, StateData)
    selector = data.allocations["uid-claim-default-c"]["nodeSelector"]
    assert selector == {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "rack", "operator": "In", "values": ["r1"]},
                    {"key": "zone", "operator": "In", "values": ["a"]},
                ]
            }
        ]
    }


def test_a_partition_reserved_in_one_cycle_counts_in_the_next() -> None:
    # One-device requests are decided by counting devices that fit on their own; the counts
    # are kept across cycles and must see what the last Reserve took from the counters.
    whole = make_claim("w").request("req-1", CLASS, selectors=profile("whole")).dict()
    world = World([GPU_CLASS, COUNTERS, PARTITIONS, pending(selectors=profile("half")), whole])
    _, statuses = world.filter(pod_using("w"))
    assert statuses["worker"].is_success
    world.reserve(pod_using("c"), "worker")
    _, statuses = world.filter(pod_using("w"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE


def test_counters_written_in_the_wrong_shape_make_the_pool_invalid_not_the_plugin_fail() -> None:
    # The API server refuses such slices; a hand-written simulation may still hold one.
    broken = {**device("gpu-0"), "consumesCounters": ["gpu-0"]}
    slice_ = make_slice("worker-gpus", DRIVER, [broken], node="worker")
    world = World([GPU_CLASS, slice_, pending()])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == unresolvable("invalid resource pools were encountered")
