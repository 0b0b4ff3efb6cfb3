"""PreBindPreFlight and the nomination that comes before a binding cycle's slow part: a pod
whose PreBind has work to do, or which Permit holds, is nominated to its node first; a pod
with nothing to wait for goes straight to its Binding; a PreBindPreFlight that fails or answers
a code the point does not allow fails the attempt in kube-scheduler's words."""

from __future__ import annotations

from typing import Any
from typing import ClassVar

from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

PERMIT_WAIT = 30.0
ANSWERS = {
    "work": Status(),
    "skip": Status.skip(),
    "error": Status.from_error("no disk"),
    "reject": Status.unschedulable("full"),
}


class NominationAtPreBind:
    """What the API said of each pod's nomination when its PreBind ran."""

    seen: ClassVar[dict[str, str]] = {}

    @classmethod
    async def record(cls, handle: Handle, pod: Pod) -> Status:
        current = await handle.api.get("pods", pod.namespace, pod.name)
        cls.seen[pod.name] = (current.get("status") or {}).get("nominatedNodeName", "")
        return Status()


class Attaching:
    """A PreBind plugin whose PreBindPreFlight answers what the pod's `pre-flight` label says."""

    name = "Attaching"

    def __init__(self, args: None, handle: Handle) -> None:
        self._handle = handle

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return ANSWERS[pod.labels.get("pre-flight", "skip")]

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        status = await NominationAtPreBind.record(self._handle, pod)
        return Status.from_error("disk busy") if "fail" in pod.labels else status


class Unsaying:
    """A PreBind plugin with no PreBindPreFlight: taken to have work for every pod."""

    name = "Unsaying"

    def __init__(self, args: None, handle: Handle) -> None:
        self._handle = handle

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return await NominationAtPreBind.record(self._handle, pod)


class Holding:
    """Holds pods labelled `hold` at Permit."""

    name = "Holding"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        if "hold" in pod.labels:
            return Status.wait(), PERMIT_WAIT
        return Status(), 0.0


SPECS = [
    PluginSpec(name="Attaching", plugin_class=Attaching),
    PluginSpec(name="Unsaying", plugin_class=Unsaying),
    PluginSpec(name="Holding", plugin_class=Holding),
]


def config(*pre_bind: str) -> dict[str, Any]:
    plugins = {
        "preBind": {"enabled": [{"name": name} for name in pre_bind]},
        "permit": {"enabled": [{"name": "Holding"}]},
    }
    return {"profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}


def nomination(h: Harness, name: str) -> str | None:
    status: dict[str, Any] = h.pod("default", name).get("status") or {}
    return status.get("nominatedNodeName")


async def test_a_pod_prebind_works_for_is_nominated_before_prebind() -> None:
    NominationAtPreBind.seen.clear()
    async with Harness(config("Attaching"), extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict(), make_pod("db").label("pre-flight", "work").dict()])
        assert await h.schedule_active() == 1
        assert h.node_of("default", "db") == "n1"
        assert NominationAtPreBind.seen == {"db": "n1"}


async def test_a_failed_prebind_takes_the_nomination_back() -> None:
    NominationAtPreBind.seen.clear()
    async with Harness(config("Attaching"), extra_plugins=SPECS) as h:
        pod = make_pod("db").label("pre-flight", "work").label("fail", "y").dict()
        h.create([make_node("n1").dict(), pod])
        assert await h.schedule_active() == 1
        assert NominationAtPreBind.seen == {"db": "n1"}
        assert h.node_of("default", "db") is None
        assert h.event_notes("default", "db", "FailedScheduling") == [
            'running PreBind plugin "Attaching": disk busy'
        ]
        assert nomination(h, "db") is None
        assert h.scheduler.queue.nominated_pods_for_node("n1") == []


async def test_a_pod_with_nothing_to_wait_for_is_bound_without_a_nomination() -> None:
    NominationAtPreBind.seen.clear()
    async with Harness(config("Attaching"), extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict(), make_pod("web").dict()])
        assert await h.schedule_active() == 1
        assert h.node_of("default", "web") == "n1"
        assert nomination(h, "web") is None
        # The plugin said Skip: its PreBind was not called.
        assert NominationAtPreBind.seen == {}


async def test_a_prebind_plugin_that_cannot_say_is_taken_to_work() -> None:
    NominationAtPreBind.seen.clear()
    async with Harness(config("Unsaying"), extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict(), make_pod("web").dict()])
        assert await h.schedule_active() == 1
        assert NominationAtPreBind.seen == {"web": "n1"}


async def test_a_pod_held_at_permit_is_nominated_while_it_waits() -> None:
    async with Harness(config("Attaching"), extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict(), make_pod("member").label("hold", "yes").dict()])
        assert await h.schedule_active() == 1
        assert h.node_of("default", "member") is None
        assert nomination(h, "member") == "n1"
        waiting = h.scheduler.waiting_pods
        [held] = list(waiting)
        held.allow("Holding")
        await h.quiesce()
        assert h.node_of("default", "member") == "n1"


async def test_a_failing_pre_flight_fails_the_attempt_in_upstreams_words() -> None:
    async with Harness(config("Attaching"), extra_plugins=SPECS) as h:
        h.create(
            [
                make_node("n1").dict(),
                make_pod("broken").req(cpu="1").label("pre-flight", "error").dict(),
                make_pod("odd")
                .req(cpu="1")
                .label("pre-flight", "reject")
                .label("hold", "y")
                .dict(),
            ]
        )
        assert await h.schedule_active() == 2
        assert h.node_of("default", "broken") is None
        assert h.event_notes("default", "broken", "FailedScheduling") == [
            'running PreBindPreFlight "Attaching": no disk'
        ]
        assert h.event_notes("default", "odd", "FailedScheduling") == [
            'PreBindPreFlight Attaching returned "Unschedulable", which is unsupported. It is '
            "supposed to return Success, Skip, or Error status"
        ]
        # Nothing was nominated, and the pod Permit held is held no longer; the CPU the two
        # had reserved is free again.
        assert nomination(h, "broken") is None and nomination(h, "odd") is None
        assert len(h.scheduler.waiting_pods) == 0
        assert h.scheduler.cache.table.requested_of("cpu").tolist() == [0]
