"""DynamicResources PreBind and Unreserve against the in-memory cluster: the allocation, the
finalizer and the reservation written to the claim, conflicts retried, losers told why."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import pytest

from plugins.dynamic_resources import DynamicResources
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import with_claims
from scheduler.testing.plugin_harness import DictLister
from tests.plugins.dra_world import CLASS
from tests.plugins.dra_world import DRIVER
from tests.plugins.dra_world import World

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
ONE_GPU = make_slice("worker-gpus", DRIVER, [device("gpu-0")], node="worker")
FINALIZER = "resource.kubernetes.io/delete-protection"


def pod(name: str = "p") -> Pod:
    raw = with_claims(make_pod(name).uid(f"{name}-uid").dict(), claims={"gpu": "c"})
    return Pod.from_dict(raw)


def world_with(*objects: dict[str, Any]) -> World:
    return World([GPU_CLASS, ONE_GPU, *objects])


async def test_pre_bind_writes_allocation_reservation_and_finalizer() -> None:
    world = world_with(make_claim("c").request("gpu", CLASS).dict())
    state = world.reserve(pod(), "worker")
    status = await world.plugin.pre_bind(state, pod(), "worker")
    assert status.is_success, status
    claim = world.claim("c")
    assert claim["metadata"]["finalizers"] == [FINALIZER]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "p-uid"}]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert results == [{"request": "gpu", "driver": DRIVER, "pool": "worker", "device": "gpu-0"}]
    # Stamped as kube-scheduler stamps its allocations, to the second, from the injected clock.
    stamp = world.clock.wall().strftime("%Y-%m-%dT%H:%M:%SZ")
    assert claim["status"]["allocation"]["allocationTimestamp"] == stamp


def test_pre_flight_works_for_a_pod_with_claims_only() -> None:
    world = world_with(make_claim("c").request("gpu", CLASS).dict())
    state = world.reserve(pod(), "worker")
    assert world.plugin.pre_bind_pre_flight(state, pod(), "worker").is_success
    # No claims, so no state of the plugin's: PreBind has nothing to do.
    assert world.plugin.pre_bind_pre_flight(CycleState(), pod(), "worker").is_skip


def held_by_another() -> dict[str, Any]:
    """Claim c, allocated gpu-0 and reserved for another pod."""
    holder = make_pod("holder").uid("holder-uid").obj()
    shared = (
        make_claim("c")
        .request("gpu", CLASS)
        .allocated("worker", ("gpu", DRIVER, "worker", "gpu-0"))
        .reserved_for(holder)
    )
    return shared.dict()


async def free(world: World) -> None:
    """Claim c is freed, as the resourceclaim controller frees it once no pod uses it."""
    await world.sim.patch_object(
        "resourceclaims",
        "default",
        "c",
        {"status": {"reservedFor": None, "allocation": None}},
        subresource="status",
    )


async def test_pre_bind_only_reserves_an_allocated_shared_claim() -> None:
    world = world_with(held_by_another())
    state = world.reserve(pod(), "worker")
    assert (await world.plugin.pre_bind(state, pod(), "worker")).is_success
    claim = world.claim("c")
    assert [r["uid"] for r in claim["status"]["reservedFor"]] == ["holder-uid", "p-uid"]
    assert "finalizers" not in claim["metadata"]
    # The stored allocation is immutable: reserving leaves it as it was, unstamped.
    assert "allocationTimestamp" not in claim["status"]["allocation"]


async def test_pre_bind_retries_after_a_conflict() -> None:
    world = world_with(make_claim("c").request("gpu", CLASS).dict())
    state = world.reserve(pod(), "worker")
    world.sim.fail_next("patch", "resourceclaims", ConflictError("the object has been modified"))
    assert (await world.plugin.pre_bind(state, pod(), "worker")).is_success
    assert world.claim("c")["status"]["reservedFor"][0]["uid"] == "p-uid"


async def test_pre_bind_fails_when_someone_else_allocated_the_claim() -> None:
    world = world_with(make_claim("c").request("gpu", CLASS).dict())
    state = world.reserve(pod(), "worker")
    await world.sim.patch_object(
        "resourceclaims",
        "default",
        "c",
        {"status": {"allocation": {"devices": {"results": []}}}},
    )
    status = await world.plugin.pre_bind(state, pod(), "worker")
    assert status.code is Code.ERROR
    assert status.message() == "claim default/c got allocated elsewhere in the meantime"


TOO_MANY = (
    'ResourceClaim.resource.k8s.io "c" is invalid: status.reservedFor: Too many: 257: '
    "must have at most 256 items"
)
STALE = "the object has been modified; please apply your changes to the latest version"


async def test_a_refused_reservation_is_an_error_naming_the_claim_and_the_servers_answer() -> None:
    shared = (
        make_claim("c")
        .request("gpu", CLASS)
        .allocated("worker", ("gpu", DRIVER, "worker", "gpu-0"))
    )
    world = world_with(shared.dict())
    state = world.reserve(pod(), "worker")
    world.sim.fail_next("patch", "resourceclaims", APIError(422, TOO_MANY))
    status = await world.plugin.pre_bind(state, pod(), "worker")
    assert status.code is Code.ERROR
    assert status.message() == f"add reservation to claim default/c: {TOO_MANY}"


async def test_a_refused_finalizer_is_an_error_of_its_own() -> None:
    world = world_with(make_claim("c").request("gpu", CLASS).dict())
    state = world.reserve(pod(), "worker")
    world.sim.fail_next("patch", "resourceclaims", APIError(403, "forbidden"))
    status = await world.plugin.pre_bind(state, pod(), "worker")
    assert status.message() == "add finalizer to claim default/c: forbidden"
    assert "finalizers" not in world.claim("c")["metadata"]


async def test_conflicts_on_every_attempt_end_in_the_last_ones_answer() -> None:
    world = world_with(make_claim("c").request("gpu", CLASS).dict())
    state = world.reserve(pod(), "worker")
    for _ in range(5):
        world.sim.fail_next("patch", "resourceclaims", ConflictError(STALE))
    status = await world.plugin.pre_bind(state, pod(), "worker")
    assert status.code is Code.ERROR
    assert status.message() == f"add finalizer to claim default/c: {STALE}"
    # One conflict fewer than the attempts: the claim is read again and the write goes through.
    for _ in range(4):
        world.sim.fail_next("patch", "resourceclaims", ConflictError(STALE))
    assert (await world.plugin.pre_bind(state, pod(), "worker")).is_success
    assert world.claim("c")["status"]["reservedFor"][0]["uid"] == "p-uid"


@pytest.mark.parametrize("conflicts", [0, 1], ids=["at-once", "after-a-conflict"])
async def test_unreserve_after_pre_bind_takes_the_pod_out_again(conflicts: int) -> None:
    world = world_with(make_claim("c").request("gpu", CLASS).dict())
    started: list[Callable[[], Awaitable[None]]] = []
    world.handle.start_background = lambda name, work, **_: started.append(work)  # type: ignore[method-assign]
    state = world.reserve(pod(), "worker")
    assert (await world.plugin.pre_bind(state, pod(), "worker")).is_success
    world.plugin.unreserve(state, pod(), "worker")
    for _ in range(conflicts):  # a driver wrote the claim between the read and the write
        world.sim.fail_next("patch", "resourceclaims", ConflictError(STALE))
    await asyncio.gather(*(work() for work in started))
    assert world.claim("c")["status"]["reservedFor"] == []


async def test_devices_in_a_restarted_plugin_come_from_the_claims() -> None:
    world = world_with(
        make_claim("c").request("gpu", CLASS).dict(), make_claim("d").request("gpu", CLASS).dict()
    )
    state = world.reserve(pod(), "worker")
    assert (await world.plugin.pre_bind(state, pod(), "worker")).is_success
    # A new plugin instance knows nothing in memory: the written allocation keeps gpu-0 taken.
    world.plugin = DynamicResources(None, world.handle)
    other = Pod.from_dict(with_claims(make_pod("q").uid("q").dict(), claims={"gpu": "d"}))
    _, statuses = world.filter(other)
    assert statuses["worker"].message() == "cannot allocate all claims"


async def test_devices_of_a_claim_freed_before_the_next_pod_looks_are_free_again() -> None:
    world = world_with(make_claim("c").request("gpu", CLASS).dict())
    state = world.reserve(pod("a"), "worker")
    assert (await world.plugin.pre_bind(state, pod("a"), "worker")).is_success
    await free(world)  # pod a ran and finished before any other pod's PreFilter looked
    world.reserve(pod("b"), "worker")
    assert world.claim("c")["status"].get("allocation") is None


async def test_unreserve_keeps_a_stored_allocation_taken_until_the_informer_shows_it() -> None:
    world = world_with(
        make_claim("c").request("gpu", CLASS).dict(), make_claim("d").request("gpu", CLASS).dict()
    )
    caught_up = world.handle.lister("resourceclaims")
    state = world.reserve(pod("a"), "worker")
    behind = DictLister([copy.deepcopy(c) for c in world.sim.objects("resourceclaims")])
    assert (await world.plugin.pre_bind(state, pod("a"), "worker")).is_success
    world.handle._listers["resourceclaims"] = behind
    world.plugin.unreserve(state, pod("a"), "worker")  # Bind failed, say
    other = Pod.from_dict(with_claims(make_pod("q").uid("q").dict(), claims={"gpu": "d"}))
    _, statuses = world.filter(other)
    assert statuses["worker"].message() == "cannot allocate all claims"
    world.handle._listers["resourceclaims"] = caught_up  # type: ignore[assignment]
    _, statuses = world.filter(other)
    assert statuses["worker"].message() == "cannot allocate all claims"


async def test_pre_bind_fails_when_the_allocated_claim_was_freed_meanwhile() -> None:
    world = world_with(held_by_another())
    state = world.reserve(pod(), "worker")
    await free(world)
    status = await world.plugin.pre_bind(state, pod(), "worker")
    assert (status.code, status.message()) == (
        Code.ERROR,
        "claim default/c got deallocated elsewhere in the meantime",
    )
    assert world.claim("c")["status"].get("reservedFor") is None
