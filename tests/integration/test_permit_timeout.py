"""A Permit wait that times out unwinds everything the scheduling cycle did."""

from __future__ import annotations

import asyncio
import copy
from typing import ClassVar

from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

PERMIT_TIMEOUT = 30.0


class Journal:
    """Where the test plugins record what the framework asked of them, in order."""

    calls: ClassVar[list[str]] = []


def _reserve_plugin(plugin_name: str) -> type:
    class Recorder:
        name = plugin_name

        def __init__(self, args: None, handle: Handle) -> None:
            pass

        def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
            Journal.calls.append(f"reserve {plugin_name} {pod.name}@{node_name}")
            return Status()

        def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
            Journal.calls.append(f"unreserve {plugin_name} {pod.name}@{node_name}")

    return Recorder


class SlowApproval:
    name = "SlowApproval"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        Journal.calls.append(f"permit {pod.name}")
        return Status.wait(), PERMIT_TIMEOUT


SPECS = [
    PluginSpec(name="FirstReserve", plugin_class=_reserve_plugin("FirstReserve")),
    PluginSpec(name="SecondReserve", plugin_class=_reserve_plugin("SecondReserve")),
    PluginSpec(name="SlowApproval", plugin_class=SlowApproval),
]

CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "reserve": {"enabled": [{"name": "FirstReserve"}, {"name": "SecondReserve"}]},
                "permit": {"enabled": [{"name": "SlowApproval"}]},
            },
        }
    ]
}


async def test_permit_timeout_unreserves_forgets_and_requeues_with_backoff() -> None:
    Journal.calls.clear()
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict(), make_pod("web").req(cpu="1").dict()])
        assert await h.schedule_active() == 1
        scheduler = h.scheduler
        # The pod is assumed on n1 and waiting at Permit: its CPU is already counted there.
        assert scheduler.cache.is_assumed("default/web")
        assert scheduler.cache.table.requested_of("cpu").tolist() == [1000]
        assert len(scheduler.waiting_pods) == 1

        h.clock.advance(PERMIT_TIMEOUT - 1)
        await h.quiesce()
        assert scheduler.cache.is_assumed("default/web"), "the wait must last the full timeout"

        h.clock.advance(1)
        await h.quiesce()

        assert Journal.calls == [
            "reserve FirstReserve web@n1",
            "reserve SecondReserve web@n1",
            "permit web",
            # every Reserve plugin is unreserved, in reverse order
            "unreserve SecondReserve web@n1",
            "unreserve FirstReserve web@n1",
        ]
        assert not scheduler.cache.is_assumed("default/web")
        assert scheduler.cache.table.requested_of("cpu").tolist() == [0]
        assert len(scheduler.waiting_pods) == 0
        assert h.node_of("default", "web") is None
        # Requeued with backoff (its first attempt: 1 s), not straight back to activeQ.
        assert scheduler.queue.locate("default/web") == "backoff"
        notes = h.event_notes("default", "web", "FailedScheduling")
        assert notes == [
            "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin "
            "SlowApproval."
        ]
        condition = next(
            c
            for c in h.pod("default", "web")["status"]["conditions"]
            if c["type"] == "PodScheduled"
        )
        assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
        assert "SlowApproval" in condition["message"]


async def test_a_pod_recreated_while_its_predecessor_waits_gets_nothing_of_that_failure() -> None:
    """The old pod, deleted while held at Permit, fails; the new pod of the same name is not
    given that failure's Event or condition (upstream drops both when the UID changed)."""
    Journal.calls.clear()
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict(), make_pod("web").req(cpu="1").dict()])
        assert await h.schedule_active() == 1
        assert len(h.scheduler.waiting_pods) == 1
        old_uid = h.pod("default", "web")["metadata"]["uid"]
        await h.sim.delete("pods", "default", "web")
        h.create([make_pod("web").req(cpu="1").dict()])
        await h.quiesce()
        assert len(h.scheduler.waiting_pods) == 0
        new = h.pod("default", "web")
        assert new["metadata"]["uid"] != old_uid
        assert h.event_notes("default", "web", "FailedScheduling") == []
        scheduled = [
            c for c in new["status"].get("conditions") or () if c["type"] == "PodScheduled"
        ]
        assert all(c["status"] != "False" for c in scheduled), scheduled


async def test_a_pod_held_at_permit_that_starts_terminating_is_rejected_at_once() -> None:
    """Deleted while it has a finalizer, the assumed pod only gets a deletionTimestamp; its
    wait is rejected then and there, and its place given back, as upstream does."""
    Journal.calls.clear()
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        web = make_pod("web").req(cpu="1").dict()
        web["metadata"]["finalizers"] = ["example.com/keep"]
        h.create([make_node("n1").dict(), web])
        assert await h.schedule_active() == 1
        assert len(h.scheduler.waiting_pods) == 1
        await h.sim.delete("pods", "default", "web")
        await h.quiesce()
        assert h.pod("default", "web")["metadata"]["deletionTimestamp"]
        assert len(h.scheduler.waiting_pods) == 0
        assert not h.scheduler.cache.is_assumed("default/web")
        assert h.scheduler.cache.table.requested_of("cpu").tolist() == [0]


class HeldAtPreBind:
    """Holds every pod at PreBind (setting `entered`) until the test sets `release`."""

    name = "HeldAtPreBind"
    entered: ClassVar[asyncio.Event] = asyncio.Event()
    release: ClassVar[asyncio.Event] = asyncio.Event()

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        HeldAtPreBind.entered.set()
        await HeldAtPreBind.release.wait()
        return Status()


async def test_a_binding_pod_that_starts_terminating_gives_its_place_back_at_once() -> None:
    """Past Permit there is no wait to reject: the assumed pod is forgotten right away, so its
    CPU is free for others before its binding cycle ends."""
    HeldAtPreBind.entered, HeldAtPreBind.release = asyncio.Event(), asyncio.Event()
    spec = PluginSpec(name="HeldAtPreBind", plugin_class=HeldAtPreBind)
    plugins = {"preBind": {"enabled": [{"name": "HeldAtPreBind"}]}}
    config = {"profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}
    async with Harness(config, extra_plugins=[spec]) as h:
        web = make_pod("web").req(cpu="1").dict()
        web["metadata"]["finalizers"] = ["example.com/keep"]
        h.create([make_node("n1").dict(), web])
        await h.informers_caught_up()
        info = h.scheduler.queue.pop()
        assert info is not None
        await h.scheduler.schedule_next(info)
        await HeldAtPreBind.entered.wait()
        assert h.scheduler.cache.table.requested_of("cpu").tolist() == [1000]
        await h.sim.delete("pods", "default", "web")
        await h.informers_caught_up()
        assert not h.scheduler.cache.is_assumed("default/web")
        assert h.scheduler.cache.table.requested_of("cpu").tolist() == [0]
        HeldAtPreBind.release.set()
        await h.quiesce()
        assert h.scheduler.cache.table.requested_of("cpu").tolist() == [0]


async def test_a_pod_of_a_name_still_assumed_for_its_predecessor_waits_in_backoff() -> None:
    """The cache knows pods by name: while the old pod is assumed, a new pod of the same name
    is put back in backoff instead of being dropped from the queue."""
    Journal.calls.clear()
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict(), make_pod("web").req(cpu="1").dict()])
        assert await h.schedule_active() == 1
        assert h.scheduler.cache.is_assumed("default/web")
        successor = make_pod("web").req(cpu="1").obj()
        h.scheduler.queue.add(successor)
        info = h.scheduler.queue.pop()
        assert info is not None and info.pod.uid == successor.uid
        await h.scheduler.schedule_next(info)
        assert h.scheduler.queue.locate("default/web") == "backoff"
        assert len(h.scheduler.waiting_pods) == 1


async def test_a_relist_swapping_in_a_new_pod_of_the_name_lets_the_old_go_and_queues_the_new() -> (
    None
):
    """A pod deleted and made again while the watch was away comes back from a relist as an
    update from the old UID to the new. Upstream, keyed by UID, sees one pod go and another
    come: the old pod's wait is rejected and the new pod is scheduled."""
    Journal.calls.clear()
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict(), make_pod("web").req(cpu="1").dict()])
        assert await h.schedule_active() == 1
        old_raw = h.pod("default", "web")
        new_raw = make_pod("web").req(cpu="1").dict()
        h.scheduler.handlers.pod_updated(old_raw, new_raw)
        await h.quiesce()
        assert "unreserve FirstReserve web@n1" in Journal.calls
        assert not h.scheduler.cache.is_assumed("default/web")
        assert h.scheduler.queue.locate("default/web") == "active"
        assert await h.schedule_active() == 1
        [waiting] = list(h.scheduler.waiting_pods)
        assert waiting.pod.uid == new_raw["metadata"]["uid"]


async def test_an_update_of_a_pod_held_at_permit_is_timed_as_upstream_times_it() -> None:
    """Upstream times the update before it finds the pod assumed, and then ignores it."""
    Journal.calls.clear()
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict(), make_pod("web").req(cpu="1").dict()])
        assert await h.schedule_active() == 1
        await h.quiesce()
        registry = h.scheduler.metrics.registry
        metric = "scheduler_event_handling_duration_seconds_count"

        def handled(event: str) -> float:
            return registry.get_sample_value(metric, {"event": event}) or 0.0

        before = handled("UnschedulablePodUpdate")
        pod = copy.deepcopy(h.pod("default", "web"))
        pod["metadata"].setdefault("labels", {})["app"] = "web"
        await h.sim.update("pods", pod)
        await h.quiesce()
        assert handled("UnschedulablePodUpdate") == before + 1
        assert handled("UnschedulablePodUpdatePodLabel") == 0
        assert len(h.scheduler.waiting_pods) == 1
