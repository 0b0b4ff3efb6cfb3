"""VolumeBinding Reserve, Unreserve and PreBind against the in-memory cluster and its PV
controller, on a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pytest

from plugins.volume_binding import VolumeBinding
from plugins.volume_binding import VolumeBindingArgs
from plugins.volume_binding.assume_cache import AssumeError
from scheduler.cluster.sim import SimCluster
from scheduler.cluster.sim.pv_controller import PVBinderController
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.errors import ConflictError
from scheduler.testing import FakeClock
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_csi_node
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_class

READ_RESOURCES = (
    "pods",
    "persistentvolumeclaims",
    "persistentvolumes",
    "storageclasses",
    "csinodes",
    "csidrivers",
    "csistoragecapacities",
)


class SimLister:
    """A Lister reading the in-memory cluster directly (an informer that is never behind)."""

    def __init__(self, sim: SimCluster, resource: str) -> None:
        self._sim, self._resource = sim, resource
        self._indices: dict[str, Callable[[Mapping[str, Any]], str | None]] = {}

    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        for obj in self._sim.objects(self._resource):
            meta = obj["metadata"]
            if meta["name"] == name and (meta.get("namespace") or "") == namespace:
                return obj
        return None

    def list(self, namespace: str | None = None) -> Sequence[Mapping[str, Any]]:
        return [
            o
            for o in self._sim.objects(self._resource)
            if namespace is None or (o["metadata"].get("namespace") or "") == namespace
        ]

    def add_index(self, name: str, index: Callable[[Mapping[str, Any]], str | None]) -> None:
        self._indices.setdefault(name, index)

    def by_index(self, name: str, value: str) -> Sequence[Mapping[str, Any]]:
        index = self._indices[name]
        return [o for o in self._sim.objects(self._resource) if index(o) == value]

    @property
    def revision(self) -> int:
        return self._sim.revision

    def changed_since(self, revision: int) -> Sequence[tuple[str, str]] | None:
        return None  # read everything again


class World:
    def __init__(self, objects: Iterable[Mapping[str, Any]], timeout: int = 600) -> None:
        self.clock = FakeClock()
        self.sim = SimCluster(self.clock)
        nodes = [make_node(f"n-{zone}").zone(zone) for zone in ("a", "b")]
        self.sim.load([*(n.dict() for n in nodes), *objects])
        self.table: NodeTable = build_table(n.obj() for n in nodes)
        self.handle = FakeHandle(self.table, clock=self.clock, api=self.sim)
        for resource in READ_RESOURCES:
            self.handle._listers[resource] = SimLister(self.sim, resource)  # type: ignore[assignment]
        self.plugin = VolumeBinding(VolumeBindingArgs(bind_timeout_seconds=timeout), self.handle)
        self.controller = PVBinderController(self.sim)

    def schedule(self, pod: Pod, node: str) -> CycleState:
        """The pod created, then PreFilter, Filter on every node and Reserve on `node`."""
        self.sim.load([pod.raw])
        state = CycleState()
        _, status = self.plugin.pre_filter(state, pod, self.table)
        assert status.is_success, status
        for info in self.table.node_infos:
            self.plugin.filter(state, pod, info)
        assert self.plugin.reserve(state, pod, node).is_success
        return state

    async def pre_bind_started(self, pod: Pod, node: str) -> asyncio.Task[Status]:
        """`schedule` the pod to `node` and start its PreBind, which writes and then waits."""
        state = self.schedule(pod, node)
        task = asyncio.create_task(self.plugin.pre_bind(state, pod, node))
        await settle()
        return task

    def filter(self, pod: Pod) -> list[Status]:
        state = CycleState()
        _, status = self.plugin.pre_filter(state, pod, self.table)
        assert status.is_success, status
        return [self.plugin.filter(state, pod, info) for info in self.table.node_infos]

    def stage_errors(self, operation: str) -> float:
        value = self.handle.metrics.registry.get_sample_value(
            "scheduler_volume_scheduling_stage_error_total", {"operation": operation}
        )
        return 0.0 if value is None else value

    def pvc(self, name: str) -> dict[str, Any]:
        return next(
            o for o in self.sim.objects("persistentvolumeclaims") if o["metadata"]["name"] == name
        )

    def pv(self, name: str) -> dict[str, Any]:
        return next(
            o for o in self.sim.objects("persistentvolumes") if o["metadata"]["name"] == name
        )


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def pod_using(name: str, *claims: str) -> Pod:
    return make_pod(name).spec(volumes=[claim_volume(c) for c in claims]).obj()


LOCAL = make_storage_class("local", "kubernetes.io/no-provisioner").wait_for_first_consumer()
DYNAMIC = make_storage_class("dynamic", "csi.example.com").wait_for_first_consumer()


def static_world(**kwargs: Any) -> World:
    return World(
        [
            LOCAL.dict(),
            make_pvc("first").storage_class("local").request("1Gi").dict(),
            make_pvc("second").storage_class("local").request("1Gi").dict(),
            make_pv("pv-b").storage_class("local").capacity("1Gi").zone("b").available().dict(),
        ],
        **kwargs,
    )


BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"


def test_reserve_keeps_the_volume_from_the_next_pod_until_unreserve() -> None:
    world = static_world()
    first, second = pod_using("a", "first"), pod_using("b", "second")
    state = world.schedule(first, "n-b")
    assert [s.message() for s in world.filter(second)] == [BIND_CONFLICT, BIND_CONFLICT]
    world.plugin.unreserve(state, first, "n-b")
    assert [s.code for s in world.filter(second)] == [
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        Code.SUCCESS,
    ]
    world.plugin.unreserve(state, first, "n-b")  # idempotent
    world.plugin.unreserve(CycleState(), first, "n-b")  # and harmless without state


async def test_pre_bind_writes_the_claim_ref_and_waits_for_the_controller() -> None:
    world = static_world()
    pod = pod_using("a", "first")
    task = await world.pre_bind_started(pod, "n-b")
    claim_ref = world.pv("pv-b")["spec"]["claimRef"]
    assert (claim_ref["name"], claim_ref["uid"]) == ("first", world.pvc("first")["metadata"]["uid"])
    assert world.pv("pv-b")["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"]
    assert not task.done(), "the claim is not bound yet"

    world.clock.advance(1)
    await settle()
    assert not task.done(), "still nobody has bound the claim"

    await world.controller.sync()
    world.clock.advance(1)
    await settle()
    assert task.done()
    assert task.result() == Status()
    assert world.pvc("first")["spec"]["volumeName"] == "pv-b"


async def test_pre_bind_triggers_provisioning_on_the_chosen_node() -> None:
    world = World([DYNAMIC.dict(), make_pvc("data").storage_class("dynamic").request("2Gi").dict()])
    pod = pod_using("a", "data")
    task = await world.pre_bind_started(pod, "n-a")
    annotations = world.pvc("data")["metadata"]["annotations"]
    assert annotations["volume.kubernetes.io/selected-node"] == "n-a"
    await world.controller.sync()
    world.clock.advance(1)
    await settle()
    assert task.result() == Status()
    volume = world.pv(world.pvc("data")["spec"]["volumeName"])
    zone_term = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]
    assert zone_term["matchExpressions"][0]["values"] == ["a"]


async def test_pre_bind_times_out() -> None:
    world = static_world(timeout=5)
    pod = pod_using("a", "first")
    task = await world.pre_bind_started(pod, "n-b")
    for _ in range(4):
        world.clock.advance(1)
        await settle()
        assert not task.done()
    world.clock.advance(1)
    await settle()
    world.clock.advance(1)
    await settle()
    status = task.result()
    assert status.code is Code.ERROR
    assert status.message() == "binding volumes: context deadline exceeded"
    assert world.stage_errors("bind") == 1


async def test_pre_bind_gives_up_once_the_pod_is_deleted() -> None:
    world = static_world()
    pod = pod_using("a", "first")
    task = await world.pre_bind_started(pod, "n-b")
    world.clock.advance(1)
    await settle()
    assert not task.done()
    await world.sim.delete("pods", "default", "a")
    world.clock.advance(1)
    await settle()
    assert task.result() == Status.from_error(
        'binding volumes: pod does not exist any more: pod "a" not found'
    )


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        pytest.param(
            {"volume.kubernetes.io/selected-node": None},
            'binding volumes: selectedNode annotation reset for PVC "data"',
            id="annotation-removed",
        ),
        pytest.param(
            {"volume.kubernetes.io/selected-node": "n-b"},
            'binding volumes: provisioning failed for PVC "data"',
            id="another-node",
        ),
    ],
)
async def test_pre_bind_fails_when_provisioning_is_given_up(
    annotations: dict[str, Any], expected: str
) -> None:
    world = World([DYNAMIC.dict(), make_pvc("data").storage_class("dynamic").dict()])
    pod = pod_using("a", "data")
    task = await world.pre_bind_started(pod, "n-a")
    await world.sim.patch_object(
        "persistentvolumeclaims", "default", "data", {"metadata": {"annotations": annotations}}
    )
    world.clock.advance(1)
    await settle()
    assert task.result() == Status.from_error(expected)


async def test_a_claim_ref_reset_fails_the_binding() -> None:
    world = static_world()
    pod = pod_using("a", "first")
    task = await world.pre_bind_started(pod, "n-b")
    await world.sim.patch_object("persistentvolumes", "", "pv-b", {"spec": {"claimRef": None}})
    world.clock.advance(1)
    await settle()
    assert task.result() == Status.from_error('binding volumes: ClaimRef got reset for pv "pv-b"')


async def test_a_concurrent_change_fails_the_write_and_drops_the_assumption() -> None:
    world = static_world()
    pod = pod_using("a", "first")
    state = world.schedule(pod, "n-b")
    # Someone else changes the PV between Reserve and PreBind.
    await world.sim.patch_object(
        "persistentvolumes", "", "pv-b", {"metadata": {"labels": {"x": "y"}}}
    )
    status = await world.plugin.pre_bind(state, pod, "n-b")
    assert status.code is Code.ERROR
    assert "the object has been modified" in status.message()
    assert world.stage_errors("bind") == 1
    assert "claimRef" not in world.pv("pv-b")["spec"]
    assert world.plugin.binder.pv_cache.get(("", "pv-b")) == world.pv("pv-b")


async def test_pods_whose_claims_are_all_bound_skip_the_work() -> None:
    world = World(
        [
            make_pvc("data").bound_to("pv").dict(),
            make_pv("pv").claim("data").phase("Bound").dict(),
        ]
    )
    pod = pod_using("a", "data")
    state = world.schedule(pod, "n-a")
    revision = world.sim.revision
    assert world.plugin.pre_bind_pre_flight(state, pod, "n-a") == Status.skip()
    assert await world.plugin.pre_bind(state, pod, "n-a") == Status()
    assert world.sim.revision == revision, "nothing was written"


def test_pre_flight_says_whether_reserve_left_volumes_to_bind() -> None:
    world = static_world()
    pod = pod_using("a", "first")
    state = world.schedule(pod, "n-b")
    assert world.plugin.pre_bind_pre_flight(state, pod, "n-b") == Status()
    assert world.plugin.pre_bind_pre_flight(state, pod, "n-elsewhere") == Status.from_error(
        'no pod volume found for node "n-elsewhere"'
    )
    # A pod without claims has no state of this plugin's at all.
    assert world.plugin.pre_bind_pre_flight(CycleState(), pod, "n-b") == Status.skip()


async def test_pre_bind_on_a_node_that_was_not_filtered() -> None:
    world = static_world()
    pod = pod_using("a", "first")
    state = world.schedule(pod, "n-b")
    status = await world.plugin.pre_bind(state, pod, "n-elsewhere")
    assert status == Status.from_error('no pod volume found for node "n-elsewhere"')


async def test_a_volume_gone_between_filter_and_reserve_fails_the_assumption() -> None:
    world = static_world()
    pod = pod_using("a", "first")
    state = CycleState()
    assert world.plugin.pre_filter(state, pod, world.table)[1].is_success
    for info in world.table.node_infos:
        world.plugin.filter(state, pod, info)
    await world.sim.delete("persistentvolumes", "", "pv-b")
    status = world.plugin.reserve(state, pod, "n-b")
    assert status == Status.from_error('persistentvolumes "pv-b" not found')
    assert world.stage_errors("assume") == 1
    assert world.stage_errors("bind") == 0


def test_an_assumption_made_from_another_version_is_refused_in_upstreams_words() -> None:
    world = static_world()
    cache = world.plugin.binder.pv_cache
    stale = {**world.pv("pv-b")}
    stale["metadata"] = {**stale["metadata"], "resourceVersion": "1"}
    stored = world.pv("pv-b")["metadata"]["resourceVersion"]
    with pytest.raises(AssumeError) as refused:
        cache.assume(stale)
    assert str(refused.value) == f'"pv-b" is out of sync (stored: {stored}, assume: 1)'
    claims = world.plugin.binder.pvc_cache
    with pytest.raises(AssumeError) as missing:
        claims.assume(make_pvc("gone").dict())
    assert str(missing.value) == 'persistentvolumeclaims "default/gone" not found'


class LaggingLister(SimLister):
    """An informer that has not yet seen anything since it was made."""

    def __init__(self, sim: SimCluster, resource: str) -> None:
        super().__init__(sim, resource)
        self._seen = [dict(o) for o in sim.objects(resource)]

    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return next(
            (
                o
                for o in self._seen
                if o["metadata"]["name"] == name
                and (o["metadata"].get("namespace") or "") == namespace
            ),
            None,
        )

    def list(self, namespace: str | None = None) -> Sequence[Mapping[str, Any]]:
        return list(self._seen)


async def test_a_volume_whose_claim_ref_was_written_stays_assumed_after_unreserve() -> None:
    """The PV write went through and the claim's did not: until the informer shows the PV's
    write, the PV stays taken (as upstream keeps it), so no other pod is sent to it."""
    world = World(
        [
            LOCAL.dict(),
            DYNAMIC.dict(),
            make_pvc("first").storage_class("local").request("1Gi").dict(),
            make_pvc("second").storage_class("local").request("1Gi").dict(),
            make_pvc("data").storage_class("dynamic").request("1Gi").dict(),
            make_pv("pv-b").storage_class("local").capacity("1Gi").zone("b").available().dict(),
        ]
    )
    pod = pod_using("a", "first", "data")
    state = world.schedule(pod, "n-b")
    world.handle._listers["persistentvolumes"] = LaggingLister(world.sim, "persistentvolumes")  # type: ignore[assignment]
    world.sim.fail_next(
        "patch", "persistentvolumeclaims", ConflictError("the object has been modified")
    )
    status = await world.plugin.pre_bind(state, pod, "n-b")
    assert status.code is Code.ERROR
    assert world.pv("pv-b")["spec"]["claimRef"]["name"] == "first"
    world.plugin.unreserve(state, pod, "n-b")
    assert [s.message() for s in world.filter(pod_using("b", "second"))] == [
        BIND_CONFLICT,
        BIND_CONFLICT,
    ]
    # The claim's own assumption is gone, as upstream's.
    assert world.plugin.binder.pvc_cache.get(("default", "data")) == world.pvc("data")


async def test_a_cancelled_pre_bind_counts_as_a_bind_error() -> None:
    """A preemption or a shutdown cancels the wait; upstream counts its context's error."""
    world = static_world()
    task = await world.pre_bind_started(pod_using("a", "first"), "n-b")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert world.stage_errors("bind") == 1


# PreBind checks the PVs it waits for as upstream's checkBindings does: translated to CSI on a
# node whose CSINode migrated their in-tree plugin.
GCE_MIGRATED_N_B = {
    **make_csi_node("n-b"),
    "metadata": {
        "name": "n-b",
        "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"},
    },
}
CROSS_REGION_ZONES = "us-east1-a__us-central1-a"
CROSS_REGION_FAILURE = (
    "could not translate pv: failed to get region from zones: multiple or no regions gotten "
    "from zones, got: map[us-central1:{} us-east1:{}]"
)


def gce_disk(pv: Any) -> dict[str, Any]:
    raw: dict[str, Any] = pv.dict()
    raw["spec"]["gcePersistentDisk"] = {"pdName": "disk"}
    return raw


def gce_world(pv: dict[str, Any]) -> World:
    claim = make_pvc("first").storage_class("local").request("1Gi").dict()
    return World([LOCAL.dict(), claim, pv, GCE_MIGRATED_N_B])


async def test_pre_bind_checks_a_chosen_in_tree_volume_as_translated_to_csi() -> None:
    # Static matching takes the PV as it is (GA zone b suits n-b); translated, its affinity asks
    # for the PD driver's zone label, which n-b does not carry.
    local = make_pv("pv-gce").storage_class("local").capacity("1Gi").zone("b").available()
    world = gce_world(gce_disk(local))
    pod = pod_using("a", "first")
    assert [s.code for s in world.filter(pod)] == [
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        Code.SUCCESS,
    ]
    task = await world.pre_bind_started(pod, "n-b")
    world.clock.advance(1)
    await settle()
    assert task.result() == Status.from_error(
        'binding volumes: pv "pv-gce" node affinity doesn\'t match node "n-b": '
        "no matching NodeSelectorTerms"
    )


async def test_pre_bind_fails_on_a_chosen_volume_the_translator_refuses() -> None:
    local = make_pv("pv-gce").storage_class("local").capacity("1Gi").available()
    world = gce_world(gce_disk(local.label("topology.kubernetes.io/zone", CROSS_REGION_ZONES)))
    task = await world.pre_bind_started(pod_using("a", "first"), "n-b")
    world.clock.advance(1)
    await settle()
    assert task.result() == Status.from_error(
        f"binding volumes: failed to translate pv to csi: {CROSS_REGION_FAILURE}"
    )
    assert world.stage_errors("bind") == 1


async def test_pre_bind_fails_on_a_provisioned_volume_the_translator_refuses() -> None:
    world = World(
        [
            DYNAMIC.dict(),
            make_pvc("data").storage_class("dynamic").request("1Gi").dict(),
            GCE_MIGRATED_N_B,
        ]
    )
    task = await world.pre_bind_started(pod_using("a", "data"), "n-b")
    disk = make_pv("pv-gce").label("topology.kubernetes.io/zone", CROSS_REGION_ZONES)
    world.sim.load([gce_disk(disk)])
    await world.sim.patch_object(
        "persistentvolumeclaims", "default", "data", {"spec": {"volumeName": "pv-gce"}}
    )
    world.clock.advance(1)
    await settle()
    assert task.result() == Status.from_error(f"binding volumes: {CROSS_REGION_FAILURE}")
