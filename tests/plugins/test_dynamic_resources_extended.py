"""Extended resources that DeviceClasses provide: a pod asking for `example.com/gpu` in its
containers gets devices of the class naming that resource, through a claim the scheduler
allocates in memory, creates at PreBind and deletes again when the attempt fails."""

from __future__ import annotations

import asyncio
from typing import Any

from plugins.balanced_allocation import NodeResourcesBalancedAllocation
from plugins.balanced_allocation import NodeResourcesBalancedAllocationArgs
from plugins.dynamic_resources.extended_claim import ANNOTATION
from plugins.dynamic_resources.extended_claim import device_requests
from plugins.helpers.extended_resources import DeviceClassResolver
from plugins.node_resources_fit import NodeResourcesFit
from plugins.node_resources_fit import NodeResourcesFitArgs
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.errors import APIError
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

GPU = "example.com/gpu"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS}"
GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"', extended_resource_name=GPU)
FINALIZER = "resource.kubernetes.io/delete-protection"


def gpus(node: str, count: int) -> dict[str, Any]:
    return make_slice(f"{node}-gpus", DRIVER, [device(f"gpu-{i}") for i in range(count)], node=node)


def gpu_pod(count: int = 1, name: str = "p", resource: str = GPU) -> Pod:
    return make_pod(name).uid(f"{name}-uid").req(cpu="100m", **{resource: count}).obj()


def extended_claims(world: World) -> list[dict[str, Any]]:
    return [
        c
        for c in world.sim.objects("resourceclaims")
        if (c["metadata"].get("annotations") or {}).get(ANNOTATION) == "true"
    ]


# ---- which class provides a resource ---------------------------------------------------------


def _class(name: str, explicit: str = "", created: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    made = make_device_class(name, extended_resource_name=explicit)
    made["metadata"]["creationTimestamp"] = created
    return made


def test_a_class_provides_its_explicit_name_and_its_implicit_one() -> None:
    resolver = DeviceClassResolver(lambda: DictLister([_class("gpu", GPU), _class("fpga")]))
    assert resolver.class_names([GPU, IMPLICIT, "deviceclass.resource.kubernetes.io/fpga"]) == {
        GPU: "gpu",
        IMPLICIT: "gpu",
        "deviceclass.resource.kubernetes.io/fpga": "fpga",
    }
    assert resolver.class_for("example.com/other") is None
    assert resolver.class_for("deviceclass.resource.kubernetes.io/missing") is None
    # Native resources are never device-backed, whatever a class says.
    assert resolver.class_for("cpu") is None


def test_of_classes_naming_one_resource_the_newest_wins_then_the_lowest_name() -> None:
    older = _class("a-old", GPU, "2026-01-01T00:00:00Z")
    newer = _class("z-new", GPU, "2026-02-01T00:00:00Z")
    twin = _class("b-twin", GPU, "2026-02-01T00:00:00Z")
    assert DeviceClassResolver(lambda: DictLister([older, newer])).class_names([GPU]) == {
        GPU: "z-new"
    }
    resolver = DeviceClassResolver(lambda: DictLister([older, newer, twin]))
    assert resolver.class_names([GPU]) == {GPU: "b-twin"}


# ---- device requests from container requests --------------------------------------------------


def test_each_container_gets_its_own_request_named_by_position() -> None:
    second: dict[str, str | int] = {GPU: 1, "memory": "1Gi"}
    pod = make_pod("p").req(cpu="1", **{GPU: 2}).container("app", **second)
    requests, mappings = device_requests(pod.obj(), [GPU], {GPU: CLASS})
    # container-<container index>-request-<the resource's place among sorted request names>
    assert requests == [
        {
            "name": "container-0-request-1",
            "exactly": {"deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 2},
        },
        {
            "name": "container-1-request-0",
            "exactly": {"deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1},
        },
    ]
    names = pod.obj().raw["spec"]["containers"]
    assert mappings == [
        {
            "containerName": names[0]["name"],
            "resourceName": GPU,
            "requestName": "container-0-request-1",
        },
        {"containerName": "c1", "resourceName": GPU, "requestName": "container-1-request-0"},
    ]


def test_init_containers_reuse_what_runs_after_them_and_share_the_largest_request() -> None:
    pod = (
        make_pod("p")
        .req(**{GPU: 1})
        .init_container(False, **{GPU: 3})  # init0: needs 1 beyond the two running after it
        .init_container(False, **{GPU: 1})  # init1: the sidecar's device suffices
        .init_container(True, **{GPU: 1})  # a sidecar runs beside the others
    )
    requests, mappings = device_requests(pod.obj(), [GPU], {GPU: CLASS})
    counts = {r["name"]: r["exactly"]["count"] for r in requests}
    # Indices count init containers first: init0, init1, sidecar (2), then the main one (3).
    # init0 reuses the sidecar's and the main container's devices and asks 1 more.
    assert counts == {
        "container-0-request-0": 1,
        "container-2-request-0": 1,
        "container-3-request-0": 1,
    }
    by_container: dict[str, list[str]] = {}
    for mapping in mappings:
        by_container.setdefault(mapping["containerName"], []).append(mapping["requestName"])
    assert by_container["init0"] == [
        "container-2-request-0",
        "container-3-request-0",
        "container-0-request-0",
    ]
    assert by_container["init1"] == ["container-2-request-0"]


def test_fractional_requests_ask_for_no_device() -> None:
    pod = make_pod("p").req(**{GPU: "500m"}).obj()
    assert device_requests(pod, [GPU], {GPU: CLASS}) == ([], [])


# ---- Filter -----------------------------------------------------------------------------------


def test_a_pod_asking_for_no_provided_resource_is_skipped() -> None:
    world = World([GPU_CLASS, gpus("worker", 1)])
    _, status = world.pre_filter(make_pod("p").uid("p-uid").req(**{"example.com/fpga": 1}).obj())
    assert status.code is Code.SKIP


def test_nodes_without_enough_devices_cannot_allocate_the_extended_claim() -> None:
    world = World([GPU_CLASS, gpus("big", 2), gpus("small", 1)], nodes=("big", "small", "bare"))
    _, statuses = world.filter(gpu_pod(2))
    assert outcome(statuses["big"]) == (Code.SUCCESS, "")
    assert outcome(statuses["small"]) == unresolvable("cannot allocate all claims")
    assert outcome(statuses["bare"]) == unresolvable("cannot allocate all claims")


def test_a_node_with_the_resource_from_a_device_plugin_needs_no_devices() -> None:
    world = World(
        [GPU_CLASS, gpus("dra", 1)],
        nodes=("plugin", "dra"),
        allocatable={"plugin": {GPU: 4}},
    )
    pod = gpu_pod(1)
    state, statuses = world.filter(pod)
    assert all(s.is_success for s in statuses.values())
    # Reserve and PreBind on the device plugin's node allocate and create nothing.
    assert world.plugin.reserve(state, pod, "plugin").is_success
    assert asyncio.run(world.plugin.pre_bind(state, pod, "plugin")).is_success
    assert extended_claims(world) == []


def test_a_resource_neither_offered_nor_provided_cannot_fit() -> None:
    world = World([GPU_CLASS, gpus("worker", 1)])
    pod = make_pod("p").uid("p-uid").req(**{GPU: 1, "example.com/fpga": 1}).obj()
    _, statuses = world.filter(pod)
    assert outcome(statuses["worker"]) == unresolvable("cannot fit resource")


def test_the_implicit_name_asks_for_devices_of_its_class() -> None:
    world = World([make_device_class(CLASS, f'device.driver == "{DRIVER}"'), gpus("worker", 1)])
    _, statuses = world.filter(gpu_pod(1, resource=IMPLICIT))
    assert statuses["worker"].is_success


def test_user_claims_and_extended_resources_are_allocated_together() -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default", "uid": "c-uid"},
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": CLASS}}]}},
    }
    world = World([GPU_CLASS, gpus("two", 2), gpus("one", 1), claim], nodes=("two", "one"))
    raw = make_pod("p").uid("p-uid").req(**{GPU: 1}).dict()
    pod = Pod.from_dict(with_claims(raw, claims={"gpu": "c"}))
    _, statuses = world.filter(pod)
    assert statuses["two"].is_success
    # One device for the claim, one for the extended resource: a single GPU is not enough.
    assert outcome(statuses["one"]) == unresolvable("cannot allocate all claims")


# ---- Reserve, PreBind, Unreserve ---------------------------------------------------------------


async def run_background(world: World) -> None:
    """Run the background work the plugin started (deletions), as the scheduler would."""
    work = list(world.handle.background_work.values())
    world.handle.background_work.clear()
    await asyncio.gather(*(w() for w in work))


def creates(world: World, status: str) -> float | None:
    registry = world.handle.metrics.registry
    return registry.get_sample_value("scheduler_resourceclaim_creates_total", {"status": status})


async def test_pre_bind_creates_the_claim_allocated_and_names_it_in_the_pod_status() -> None:
    pod = gpu_pod(2)
    world = World([GPU_CLASS, gpus("worker", 2), pod.raw])
    state = world.reserve(pod, "worker")
    status = await world.plugin.pre_bind(state, pod, "worker")
    assert status.is_success, status
    [claim] = extended_claims(world)
    meta = claim["metadata"]
    assert meta["name"].startswith("p-extended-resources-")
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "p-uid", "controller": True}
    ]
    assert meta["finalizers"] == [FINALIZER]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert sorted(r["device"] for r in results) == ["gpu-0", "gpu-1"]
    assert {r["request"] for r in results} == {"container-0-request-1"}
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "p-uid"}]
    [stored_pod] = world.sim.objects("pods")
    assert stored_pod["status"]["extendedResourceClaimStatus"] == {
        "resourceClaimName": meta["name"],
        "requestMappings": [
            {
                "containerName": pod.raw["spec"]["containers"][0]["name"],
                "resourceName": GPU,
                "requestName": "container-0-request-1",
            }
        ],
    }
    assert creates(world, "success") == 1


def test_the_devices_stay_taken_between_reserve_and_the_claim_showing_them() -> None:
    first, second = gpu_pod(1, "first"), gpu_pod(1, "second")
    world = World([GPU_CLASS, gpus("worker", 1), first.raw, second.raw])
    world.reserve(first, "worker")
    _, statuses = world.filter(second)
    assert outcome(statuses["worker"]) == unresolvable("cannot allocate all claims")


async def test_devices_stay_taken_once_the_created_claim_shows_them() -> None:
    first, second = gpu_pod(1, "first"), gpu_pod(1, "second")
    world = World([GPU_CLASS, gpus("worker", 1), first.raw, second.raw])
    state = world.reserve(first, "worker")
    assert (await world.plugin.pre_bind(state, first, "worker")).is_success
    _, statuses = world.filter(second)
    assert outcome(statuses["worker"]) == unresolvable("cannot allocate all claims")


async def test_unreserve_after_pre_bind_deletes_the_claim_it_created() -> None:
    pod = gpu_pod(1)
    world = World([GPU_CLASS, gpus("worker", 1), pod.raw])
    state = world.reserve(pod, "worker")
    assert (await world.plugin.pre_bind(state, pod, "worker")).is_success
    assert len(extended_claims(world)) == 1
    world.plugin.unreserve(state, pod, "worker")
    await run_background(world)
    assert extended_claims(world) == []
    # The device is free again for the next attempt.
    _, statuses = world.filter(gpu_pod(1, "next"))
    assert statuses["worker"].is_success


async def pre_bind_refused(verb: str, resource: str) -> tuple[World, CycleState, Status]:
    """PreBind of a one-GPU pod with the server refusing its first `verb` of `resource`."""
    pod = gpu_pod(1)
    world = World([GPU_CLASS, gpus("worker", 1), pod.raw])
    state = world.reserve(pod, "worker")
    world.sim.fail_next(verb, resource, APIError(500, "etcd is down"))
    return world, state, await world.plugin.pre_bind(state, pod, "worker")


async def test_a_failed_creation_is_an_error_counted_as_a_failure() -> None:
    world, state, status = await pre_bind_refused("create", "resourceclaims")
    pod = gpu_pod(1)
    assert outcome(status) == (
        Code.ERROR,
        "create claim for extended resources default/: etcd is down",
    )
    assert creates(world, "failure") == 1
    # Unreserve frees the devices held in memory; nothing was created to delete.
    world.plugin.unreserve(state, pod, "worker")
    assert world.handle.background_work == {}
    _, statuses = world.filter(gpu_pod(1, "next"))
    assert statuses["worker"].is_success


async def test_a_pod_status_write_refused_fails_pre_bind_and_unreserve_deletes_the_claim() -> None:
    world, state, status = await pre_bind_refused("patch", "pods")
    assert outcome(status) == (
        Code.ERROR,
        "update pod default/p ExtendedResourceClaimStatus: etcd is down",
    )
    world.plugin.unreserve(state, gpu_pod(1), "worker")
    await run_background(world)
    assert extended_claims(world) == []


# ---- a claim left by an earlier attempt --------------------------------------------------------


async def left_by_an_earlier_attempt() -> tuple[World, Pod, dict[str, Any]]:
    """A one-GPU pod whose claim an attempt created and never unreserved (the process died)."""
    pod = gpu_pod(1)
    world = World([GPU_CLASS, gpus("worker", 1), pod.raw], nodes=("worker", "other"))
    state = world.reserve(pod, "worker")
    assert (await world.plugin.pre_bind(state, pod, "worker")).is_success
    [left] = extended_claims(world)
    return world, pod, left


async def test_a_claim_left_by_an_earlier_attempt_rejects_every_node_and_is_deleted() -> None:
    world, pod, left = await left_by_an_earlier_attempt()
    state, statuses = world.filter(pod)
    stale = unresolvable("cannot schedule extended resource claim")
    assert {name: outcome(s) for name, s in statuses.items()} == {"worker": stale, "other": stale}
    _, status = world.plugin.post_filter(state, pod, None)  # type: ignore[arg-type]
    assert outcome(status) == (Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
    await run_background(world)
    assert extended_claims(world) == []
    assert left["metadata"]["finalizers"] == [FINALIZER]  # taken off before the deletion
    _, statuses = world.filter(pod)
    assert statuses["worker"].is_success


async def test_awaiting_extenders_the_left_claim_is_deleted_before_post_filter_answers() -> None:
    world, pod, _ = await left_by_an_earlier_attempt()
    state, _ = world.filter(pod)
    world.sim.fail_next("delete", "resourceclaims", APIError(500, "etcd is down"))
    _, status = await world.plugin.post_filter_awaiting(state, pod, None)  # type: ignore[arg-type]
    assert outcome(status) == (Code.ERROR, "etcd is down")  # upstream's statusError
    _, status = await world.plugin.post_filter_awaiting(state, pod, None)  # type: ignore[arg-type]
    assert outcome(status) == (Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
    assert extended_claims(world) == []
    assert world.handle.background_work == {}


def test_explain_names_the_extended_claim_and_its_devices() -> None:
    world = World([GPU_CLASS, gpus("small", 1)], nodes=("small",))
    pod = gpu_pod(2)
    state, _ = world.filter(pod)
    [line] = world.plugin.filter_details(state, pod, world.table.node_infos[0])
    assert line == (
        "claim default/<extended-resources>, request container-0-request-1 (2 device(s)): "
        "1 matching, 1 free on its own: small/gpu-0 free"
    )


# ---- scoring by devices ------------------------------------------------------------------------


def three_taken_on_busy() -> list[dict[str, Any]]:
    """Claims of other workloads holding three of the four GPUs of node "busy"."""
    return [
        make_claim(f"taken-{i}")
        .request("gpu", CLASS)
        .allocated("busy", ("gpu", DRIVER, "busy", f"gpu-{i}"))
        .dict()
        for i in range(3)
    ]


def test_resource_scorers_count_the_devices_of_nodes_that_leave_the_resource_to_them() -> None:
    """MostAllocated on the GPU resource packs: a node whose devices are mostly allocated beats
    an idle one, and a device plugin's node is scored from its allocatable as always."""
    world = World(
        [GPU_CLASS, gpus("busy", 4), gpus("idle", 4), *three_taken_on_busy()],
        nodes=("busy", "idle", "plugin"),
        allocatable={"plugin": {GPU: 4}},
    )
    pod = gpu_pod(1)
    state, _ = world.pre_filter(pod)
    strategy = {"type": "MostAllocated", "resources": [{"name": GPU, "weight": 1}]}
    fit = NodeResourcesFit(
        NodeResourcesFitArgs.model_validate({"scoringStrategy": strategy}), world.handle
    )
    assert fit.pre_score(state, pod, world.table, world.table.all_rows()).is_success
    scores = fit.score_nodes(state, pod, world.table, world.table.all_rows())
    by_node = dict(zip([i.name for i in world.table.node_infos], scores.tolist(), strict=True))
    # busy: (3 allocated + 1) of 4 devices; idle: 1 of 4; plugin: 1 of 4 allocatable.
    assert by_node == {"busy": 100, "idle": 25, "plugin": 25}
    assert [fit.score(state, pod, info)[0] for info in world.table.node_infos] == list(scores)
    # Without DynamicResources' counts the GPU nodes offer nothing to score.
    bare = CycleState()
    fit.pre_score(bare, pod, world.table, world.table.all_rows())
    assert fit.score_nodes(bare, pod, world.table, world.table.all_rows()).tolist() == [0, 0, 25]


def test_balanced_allocation_counts_the_same_devices() -> None:
    world = World(
        [GPU_CLASS, gpus("busy", 4), gpus("idle", 4), *three_taken_on_busy()],
        nodes=("busy", "idle"),
    )
    pod = gpu_pod(1)  # and 100m of the nodes' 4 cpus
    state, _ = world.pre_filter(pod)
    args = NodeResourcesBalancedAllocationArgs.model_validate(
        {"resources": [{"name": "cpu", "weight": 1}, {"name": GPU, "weight": 1}]}
    )
    balanced = NodeResourcesBalancedAllocation(args, world.handle)
    assert balanced.pre_score(state, pod, world.table, world.table.all_rows()).is_success
    scores = balanced.score_nodes(state, pod, world.table, world.table.all_rows()).tolist()
    # v1.36 scores the change in balance, 50 + (50 + with - without) / 2, balance being
    # int((1 - |cpu fraction - gpu fraction| / 2) * 100). busy: 62 -> 51 (gpu 3/4 -> 4/4);
    # idle: 100 -> 88 (gpu 0/4 -> 1/4). Both lose 11 points of balance and score 69.
    assert scores == [69, 69]
    assert [balanced.score(state, pod, info)[0] for info in world.table.node_infos] == scores
    # Without the devices counted only cpu is balanced: unchanged, 75.
    bare = CycleState()
    balanced.pre_score(bare, pod, world.table, world.table.all_rows())
    assert balanced.score_nodes(bare, pod, world.table, world.table.all_rows()).tolist() == [75, 75]
