"""Pods a plugin asks to activate during the binding cycle move up once it succeeds."""

from __future__ import annotations

from typing import ClassVar

from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeTable
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import PreFilterResult
from scheduler.framework import Status
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness


class WakesAfterBind:
    """At PostBind, asks the framework to activate the pods named in `to_wake`; counts the
    attempts it sees at PreFilter."""

    name = "WakesAfterBind"
    to_wake: ClassVar[dict[str, Pod]] = {}
    tried: ClassVar[list[str]] = []

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        WakesAfterBind.tried.append(pod.name)
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        state.pods_to_activate.update(WakesAfterBind.to_wake)


CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "preFilter": {"enabled": [{"name": "WakesAfterBind"}]},
                "postBind": {"enabled": [{"name": "WakesAfterBind"}]},
            },
        }
    ]
}


async def test_pods_to_activate_at_post_bind_leave_the_unschedulable_pool() -> None:
    WakesAfterBind.tried.clear()
    spec = PluginSpec(name="WakesAfterBind", plugin_class=WakesAfterBind)
    async with Harness(CONFIG, extra_plugins=[spec]) as h:
        waiter = make_pod("waiter").req(cpu="64").dict()
        h.create([make_node("n1").dict(), waiter])
        await h.schedule_active()
        assert h.scheduler.queue.locate("default/waiter") == "unschedulable"
        WakesAfterBind.to_wake = {"default/waiter": Pod.from_dict(h.pod("default", "waiter"))}
        h.create([make_pod("p").dict()])
        await h.schedule_active()
        await h.quiesce()
        assert h.node_of("default", "p") == "n1"
        # Activated, the waiter was tried again at once (and failed again: it still does not
        # fit), instead of waiting in the pool for an event or the flush.
        assert WakesAfterBind.tried == ["waiter", "p", "waiter"]
