"""Device binding conditions in DynamicResources: devices that must be prepared before a pod
may use them, PreBind's wait for their drivers, and what happens when they fail or time out,
with kube-scheduler v1.36's texts."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import StateData
from scheduler.framework import Code
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import FakeClock
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
from tests.plugins.dra_world import outcome
from tests.plugins.dra_world import unresolvable

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
ATTACHED = "example.com/attached"
ATTACH_FAILED = "example.com/attach-failed"


def fabric_gpu(name: str = "fabric-0") -> dict[str, Any]:
    """A GPU attached to a node over a fabric once it is allocated."""
    found = device(name)
    found["bindingConditions"] = [ATTACHED]
    found["bindingFailureConditions"] = [ATTACH_FAILED]
    found["bindsToNode"] = True
    return found


FABRIC = make_slice("fabric", DRIVER, [fabric_gpu()], all_nodes=True, pool="fabric")


def pod_using(*claims: str) -> Pod:
    raw = with_claims(make_pod("p").uid("pod-uid").dict(), claims={c: c for c in claims})
    return Pod.from_dict(raw)


def pending() -> dict[str, Any]:
    return make_claim("c").request("req-1", CLASS).dict()


def advance(world: World, seconds: float) -> None:
    clock = world.clock
    assert isinstance(clock, FakeClock)
    clock.advance(seconds)


def report(
    world: World,
    condition: str,
    status: str = "True",
    *,
    claim: str = "c",
    device: str = "fabric-0",
    **extra: str,
) -> None:
    """The driver reports a condition of the claim's fabric device."""
    world.claim(claim)["status"]["devices"] = [device_status(device, condition, status, **extra)]


def device_status(device: str, condition: str, status: str = "True", **extra: str) -> Any:
    return {
        "driver": DRIVER,
        "pool": "fabric",
        "device": device,
        "conditions": [{"type": condition, "status": status, **extra}],
    }


async def settle() -> None:
    """Let the PreBind task run until it waits on the clock."""
    for _ in range(50):
        await asyncio.sleep(0)


async def bind(world: World, seconds: float) -> tuple[Status | None, Any]:
    """Reserve and start PreBind, let `seconds` pass on the clock, and return PreBind's
    status (None if it is still waiting) and the task."""
    state = world.reserve(pod_using("c"), "worker")
    task = asyncio.ensure_future(world.plugin.pre_bind(state, pod_using("c"), "worker"))
    await settle()
    advance(world, seconds)
    await settle()
    return (task.result() if task.done() else None), task


def reserved(world: World) -> dict[str, Any]:
    state = world.reserve(pod_using("c"), "worker")
    allocation: dict[str, Any] = state.read(STATE_KEY, StateData).allocations["uid-claim-default-c"]
    return allocation


def test_the_allocation_repeats_the_conditions_and_binds_to_the_node() -> None:
    world = World([GPU_CLASS, FABRIC, pending()])
    allocation = reserved(world)
    [result] = allocation["devices"]["results"]
    assert result["bindingConditions"] == [ATTACHED]
    assert result["bindingFailureConditions"] == [ATTACH_FAILED]
    # Available on all nodes, but bound to the one it is allocated on.
    assert allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [
        "worker"
    ]


def test_a_device_that_needs_preparing_is_chosen_only_when_no_other_will_do() -> None:
    # The fabric pool's name sorts first, yet the node's own GPU is taken.
    local = make_slice("worker-gpus", DRIVER, [device("gpu-0")], node="worker", pool="z-local")
    fabric = make_slice("fabric", DRIVER, [fabric_gpu()], all_nodes=True, pool="a-fabric")
    world = World([GPU_CLASS, local, fabric, pending()])
    [result] = reserved(world)["devices"]["results"]
    assert result["device"] == "gpu-0"


async def test_pre_bind_waits_until_the_driver_reports_the_device_attached() -> None:
    world = World([GPU_CLASS, FABRIC, pending()])
    status, task = await bind(world, 5)
    assert status is None  # still waiting: nothing reported yet
    assert world.handle.events[-1] == {
        "regarding": "default/p",
        "type": "Normal",
        "reason": "BindingConditionsPending",
        "action": "Scheduling",
        "note": "waiting for binding conditions for device on node worker",
        "related": None,
    }
    report(world, ATTACHED)
    advance(world, 5)
    status = await task
    assert status.is_success, status
    labels = {"profile": world.handle.profile_name, "driver": DRIVER, "status": "success"}
    registry = world.handle.metrics.registry
    assert (
        registry.get_sample_value("scheduler_dra_bindingconditions_allocations_total", labels) == 1
    )
    assert (
        registry.get_sample_value(
            "scheduler_dra_bindingconditions_wait_duration_seconds_sum", labels
        )
        == 10
    )


async def test_pre_bind_waits_while_the_informer_has_not_seen_the_allocation() -> None:
    """PreBind reads the claims from the informer, which may not have the allocation PreBind
    just wrote: such a claim's devices cannot have been reported ready yet."""
    world = World([GPU_CLASS, FABRIC, pending()])
    state = world.reserve(pod_using("c"), "worker")
    caught_up = world.handle.lister("resourceclaims")
    behind = DictLister([copy.deepcopy(world.claim("c"))])  # as it was: not allocated
    world.handle._listers["resourceclaims"] = behind
    task = asyncio.ensure_future(world.plugin.pre_bind(state, pod_using("c"), "worker"))
    await settle()
    assert not task.done()
    world.handle._listers["resourceclaims"] = caught_up  # type: ignore[assignment]
    report(world, ATTACHED)
    advance(world, 5)
    status = await task
    assert status.is_success, status


async def test_a_failure_condition_fails_pre_bind_with_the_drivers_reason() -> None:
    world = World([GPU_CLASS, FABRIC, pending()])
    status, task = await bind(world, 0)
    report(world, ATTACH_FAILED, reason="NoPath", message='switch "s1" down')
    advance(world, 5)
    status = await task
    assert (status.code, status.message()) == (
        Code.ERROR,
        'device binding failed: claim=c, reason=NoPath, message="switch \\"s1\\" down"',
    )


async def test_pre_bind_gives_up_after_the_binding_timeout() -> None:
    world = World([GPU_CLASS, FABRIC, pending()])
    status, task = await bind(world, 599)
    assert status is None
    advance(world, 1)
    await settle()
    status = await task
    assert (status.code, status.message()) == (
        Code.ERROR,
        "device binding timeout: context deadline exceeded",
    )


async def test_a_claim_deleted_during_the_wait_fails_pre_bind_as_an_error() -> None:
    world = World([GPU_CLASS, FABRIC, pending()])
    status, task = await bind(world, 0)
    assert status is None
    world.handle._listers["resourceclaims"] = DictLister([])
    advance(world, 5)
    status = await task
    assert (status.code, status.message()) == (
        Code.ERROR,
        'could not find ResourceClaim "default/c"',
    )
    labels = {"profile": world.handle.profile_name, "driver": DRIVER, "status": "error"}
    registry = world.handle.metrics.registry
    assert (
        registry.get_sample_value("scheduler_dra_bindingconditions_allocations_total", labels) == 1
    )


def allocated_fabric_claim(timestamp: str) -> dict[str, Any]:
    claim = make_claim("c").request("req-1", CLASS)
    claim.allocated("worker", ("req-1", DRIVER, "fabric", "fabric-0"))
    raw = claim.dict()
    allocation = raw["status"]["allocation"]
    allocation["allocationTimestamp"] = timestamp
    [result] = allocation["devices"]["results"]
    result["bindingConditions"] = [ATTACHED]
    result["bindingFailureConditions"] = [ATTACH_FAILED]
    return raw


def test_a_claim_whose_binding_failed_is_freed_for_another_try() -> None:
    world = World([GPU_CLASS, FABRIC, allocated_fabric_claim("2026-01-01T00:00:00Z")])
    report(world, ATTACH_FAILED, reason="NoPath", message="down")
    state, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == unresolvable("resourceclaim not available on the node")
    background: list[str] = []
    world.handle.start_background = lambda name, work, **_: background.append(name)  # type: ignore[method-assign]
    _, post = world.plugin.post_filter(state, pod_using("c"), None)  # type: ignore[arg-type]
    assert outcome(post) == (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
    assert background == ["deallocate:default/c"]


def test_a_claim_past_its_binding_timeout_is_unavailable_but_not_before() -> None:
    # The clock's wall time starts at 2026-01-01T00:00:00Z; the timeout is 600s.
    world = World([GPU_CLASS, FABRIC, allocated_fabric_claim("2026-01-01T00:00:00Z")])
    _, statuses = world.filter(pod_using("c"))
    assert statuses["worker"].is_success
    advance(world, 601)
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == unresolvable("resourceclaim not available on the node")


async def test_the_wait_reads_no_further_than_the_first_claim_not_ready() -> None:
    """A failure reported on a later claim does not end the wait while an earlier one is not
    ready yet: upstream's poll stops at the first claim that is not ready."""
    second = fabric_gpu("fabric-1")
    fabric = make_slice("fabric", DRIVER, [fabric_gpu(), second], all_nodes=True, pool="fabric")
    world = World([GPU_CLASS, fabric, pending(), make_claim("d").request("req-1", CLASS).dict()])
    both = pod_using("c", "d")
    state = world.reserve(both, "worker")
    task = asyncio.ensure_future(world.plugin.pre_bind(state, both, "worker"))
    await settle()

    def allocated_device(claim: str) -> str:
        return str(world.claim(claim)["status"]["allocation"]["devices"]["results"][0]["device"])

    report(world, ATTACH_FAILED, claim="d", device=allocated_device("d"), reason="NoPath")
    advance(world, 5)
    await settle()
    assert not task.done()
    report(world, ATTACHED, device=allocated_device("c"))
    advance(world, 5)
    status = await task
    assert (status.code, status.message()) == (
        Code.ERROR,
        'device binding failed: claim=d, reason=NoPath, message=""',
    )


async def test_the_created_claim_is_waited_for_until_the_informer_has_it() -> None:
    """The claim PreBind creates for a pod's extended resources is not in the informer at
    once: the wait treats it as not ready, not as deleted."""
    gpu_class = make_device_class(
        CLASS, f'device.driver == "{DRIVER}"', extended_resource_name="example.com/gpu"
    )
    pod = make_pod("p").uid("p-uid").req(**{"example.com/gpu": 1}).obj()
    world = World([gpu_class, FABRIC, pod.raw])
    state = world.reserve(pod, "worker")
    world.handle._listers["resourceclaims"] = DictLister([])  # the watch has not caught up
    task = asyncio.ensure_future(world.plugin.pre_bind(state, pod, "worker"))
    await settle()
    assert not task.done()
    [created] = world.sim.objects("resourceclaims")
    created["status"]["devices"] = [device_status("fabric-0", ATTACHED)]
    world.handle._listers["resourceclaims"] = DictLister([created])
    advance(world, 5)
    status = await task
    assert status.is_success, status


async def test_a_wait_cut_short_is_recorded_as_an_error() -> None:
    world = World([GPU_CLASS, FABRIC, pending()])
    status, task = await bind(world, 0)
    assert status is None
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    labels = {"profile": world.handle.profile_name, "driver": DRIVER, "status": "error"}
    registry = world.handle.metrics.registry
    assert (
        registry.get_sample_value("scheduler_dra_bindingconditions_allocations_total", labels) == 1
    )
