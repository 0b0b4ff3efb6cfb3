"""DynamicResources: the order in which a node's devices are tried (upstream's first fit: pools
by id, a pool's slices by name, a slice's devices as listed, per-device node selection checked
device by device, pools with binding conditions last where the node sees them), and PostFilter
freeing a claim: allocation, reservedFor and the drivers' device statuses in one write."""

from __future__ import annotations

from typing import Any

from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import StateData
from scheduler.framework import AwaitingPostFilterPlugin
from scheduler.framework import Code
from scheduler.framework import Pod
from scheduler.framework.errors import APIError
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import with_claims
from tests.plugins.dra_world import CLASS
from tests.plugins.dra_world import DRIVER
from tests.plugins.dra_world import World
from tests.plugins.dra_world import outcome
from tests.plugins.dra_world import unresolvable

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
ZONE_A = {
    "nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    ]
}
DEALLOCATED = (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
CONFLICT = (
    'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c": the object has been'
    " modified; please apply your changes to the latest version and try again"
)


def pod_using(*claims: str) -> Pod:
    raw = with_claims(make_pod("p").uid("pod-uid").dict(), claims={c: c for c in claims})
    return Pod.from_dict(raw)


def on(name: str, *, node: str = "", all_nodes: bool = False, zone: bool = False) -> dict[str, Any]:
    """A device of a per-device slice, available where it says."""
    found = device(name)
    if node:
        found["nodeName"] = node
    elif all_nodes:
        found["allNodes"] = True
    elif zone:
        found["nodeSelector"] = ZONE_A
    return found


def needing_attachment(found: dict[str, Any]) -> dict[str, Any]:
    return {**found, "bindingConditions": ["example.com/attached"]}


def allocated(world: World, node: str, count: int) -> list[str]:
    """The devices Reserve gives a claim for `count` devices on `node`, in result order."""
    world.sim.load([make_claim("c").request("req-1", CLASS, count).dict()])
    data = world.reserve(pod_using("c"), node).read(STATE_KEY, StateData)
    results = data.allocations["uid-claim-default-c"]["devices"]["results"]
    return [r["device"] for r in results]


# ---- device order --------------------------------------------------------------------------


def test_a_per_device_slice_is_tried_in_its_own_order() -> None:
    # Upstream walks the slice's devices as listed and checks each one's node when it comes
    # to it: the device for all nodes comes first although the other is local to the node.
    slice_ = make_slice(
        "fabric",
        DRIVER,
        [on("d0", all_nodes=True), on("d1", node="worker")],
        pool="fabric",
        per_device_nodes=True,
    )
    world = World([GPU_CLASS, slice_])
    assert allocated(world, "worker", 1) == ["d0"]


def mixed_pools() -> list[dict[str, Any]]:
    # Pool "a": a node-local slice named after a zonal one (so the zonal one comes first).
    a_local = make_slice("a-2", DRIVER, [device("a2")], node="worker", pool="a", slice_count=2)
    a_zonal = make_slice(
        "a-1", DRIVER, [device("a1")], node_selector=ZONE_A, pool="a", slice_count=2
    )
    # Pool "b": one per-device slice with a device for every kind of placement.
    b = make_slice(
        "b",
        DRIVER,
        [
            on("b-any", all_nodes=True),
            on("b-other", node="other"),
            on("b-local", node="worker"),
            on("b-zone", zone=True),
        ],
        pool="b",
        per_device_nodes=True,
    )
    # Pool "0": first by id, but its device needs attaching, so it comes last.
    late = make_slice("0", DRIVER, [needing_attachment(device("z"))], all_nodes=True, pool="0")
    return [GPU_CLASS, a_local, a_zonal, b, late]


def test_pools_by_id_slices_by_name_devices_as_listed_and_binding_conditions_last() -> None:
    nodes = ("worker", "other")
    labels = {"worker": {"zone": "a"}}
    world = World(mixed_pools(), nodes, labels=labels)
    assert allocated(world, "worker", 6) == ["a1", "a2", "b-any", "b-local", "b-zone", "z"]
    world = World(mixed_pools(), nodes, labels=labels)
    assert allocated(world, "other", 3) == ["b-any", "b-other", "z"]
    # First fit: with fewer devices wanted, the first ones in that order are taken.
    world = World(mixed_pools(), nodes, labels=labels)
    assert allocated(world, "worker", 2) == ["a1", "a2"]


def test_binding_conditions_put_a_pool_last_only_on_nodes_that_see_them() -> None:
    # Upstream asks whether the slices the node sees have a device with binding conditions.
    pool_a = [
        make_slice("a-worker", DRIVER, [device("a-w")], node="worker", pool="a", slice_count=2),
        make_slice(
            "a-other",
            DRIVER,
            [needing_attachment(device("a-o"))],
            node="other",
            pool="a",
            slice_count=2,
        ),
    ]
    pool_b = make_slice("b", DRIVER, [device("b-0")], all_nodes=True, pool="b")
    nodes = ("worker", "other")
    assert allocated(World([GPU_CLASS, *pool_a, pool_b], nodes), "worker", 1) == ["a-w"]
    assert allocated(World([GPU_CLASS, *pool_a, pool_b], nodes), "other", 1) == ["b-0"]
    # A per-device slice is seen whole: a device with binding conditions for another node
    # still puts the pool last on this one.
    per_device = make_slice(
        "a",
        DRIVER,
        [on("a-w", node="worker"), needing_attachment(on("a-o", node="other"))],
        pool="a",
        per_device_nodes=True,
    )
    assert allocated(World([GPU_CLASS, per_device, pool_b], nodes), "worker", 1) == ["b-0"]


# ---- PostFilter deallocation ---------------------------------------------------------------


def allocated_elsewhere() -> dict[str, Any]:
    """A claim the scheduler allocated on another node for this pod, with the status its
    driver wrote for the device."""
    claim = make_claim("c").request("req-1", CLASS)
    claim.allocated("other", ("req-1", DRIVER, "other", "gpu-0"))
    claim.reserved_for(pod_using("c"))
    raw = claim.dict()
    raw["status"]["devices"] = [
        {
            "driver": DRIVER,
            "pool": "other",
            "device": "gpu-0",
            "conditions": [{"type": "Ready", "status": "True"}],
        }
    ]
    return raw


def unfit() -> tuple[World, Any]:
    """A world where the claim is not available on the only node, and the cycle state."""
    world = World([GPU_CLASS, allocated_elsewhere()])
    state, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == unresolvable("resourceclaim not available on the node")
    return world, state


def assert_freed(world: World) -> None:
    status = world.claim("c").get("status") or {}
    assert "allocation" not in status
    assert "reservedFor" not in status
    assert "devices" not in status


async def test_awaited_post_filter_frees_allocation_reservation_and_device_statuses() -> None:
    world, state = unfit()
    assert isinstance(world.plugin, AwaitingPostFilterPlugin)
    _, post = await world.plugin.post_filter_awaiting(state, pod_using("c"), None)  # type: ignore[arg-type]
    assert outcome(post) == DEALLOCATED
    # Done before the answer, not left to background work.
    assert world.handle.background_work == {}
    assert_freed(world)


async def test_post_filter_that_cannot_await_frees_the_claim_in_one_background_write() -> None:
    world, state = unfit()
    _, post = world.plugin.post_filter(state, pod_using("c"), None)  # type: ignore[arg-type]
    assert outcome(post) == DEALLOCATED
    assert list(world.handle.background_work) == ["deallocate:default/c"]
    await world.handle.background_work["deallocate:default/c"]()
    assert_freed(world)


async def test_a_refused_deallocation_is_an_error_in_the_servers_words() -> None:
    world, state = unfit()
    # The claim changed after PreFilter read it: the write, guarded by the version read then,
    # is refused.
    await world.sim.patch_object(
        "resourceclaims", "default", "c", {"metadata": {"labels": {"touched": "yes"}}}
    )
    _, post = await world.plugin.post_filter_awaiting(state, pod_using("c"), None)  # type: ignore[arg-type]
    assert outcome(post) == (Code.ERROR, CONFLICT)
    assert world.claim("c")["status"]["allocation"] is not None
    assert world.claim("c")["status"]["devices"]


async def test_any_refused_deallocation_is_an_error() -> None:
    world, state = unfit()
    world.sim.fail_next("patch", "resourceclaims", APIError(500, "etcdserver: request timed out"))
    _, post = await world.plugin.post_filter_awaiting(state, pod_using("c"), None)  # type: ignore[arg-type]
    assert outcome(post) == (Code.ERROR, "etcdserver: request timed out")
    assert world.claim("c")["status"]["reservedFor"]
