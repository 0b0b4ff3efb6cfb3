"""PreEnqueue asks first the plugin that holds the pod, as upstream's queue does: while it
still holds the pod no other plugin is asked, and the pod keeps waiting on that plugin's events.
"""

from __future__ import annotations

import copy

from scheduler.framework import Handle
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness


class Hold:
    """Holds a pod while it carries the annotation named after the plugin; counts its calls."""

    name = ""
    calls = 0

    def __init__(self, args: None, handle: Handle) -> None:
        type(self).calls = 0

    def pre_enqueue(self, pod: Pod) -> Status:
        type(self).calls += 1
        if f"hold.example.com/{self.name}" in pod.annotations:
            return Status.unresolvable(f"held by {self.name}")
        return Status()


class HoldA(Hold):
    name = "HoldA"


class HoldB(Hold):
    name = "HoldB"


SPECS = [PluginSpec(name=c.name, plugin_class=c) for c in (HoldA, HoldB)]
ENABLED = {"enabled": [{"name": "HoldA"}, {"name": "HoldB"}]}
CONFIG = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {"preEnqueue": ENABLED}}]}


async def _annotate(h: Harness, *holds: str) -> None:
    pod = copy.deepcopy(h.pod("default", "p"))
    pod["metadata"]["annotations"] = {f"hold.example.com/{name}": "" for name in holds}
    await h.sim.update("pods", pod)
    await h.quiesce()


async def test_the_plugin_holding_the_pod_is_asked_first_and_alone() -> None:
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict()])
        h.create([make_pod("p").annotation("hold.example.com/HoldB", "").dict()])
        await h.quiesce()
        info = h.scheduler.queue.get("default/p")
        assert info is not None and info.gating_plugin == "HoldB"

        HoldA.calls = 0
        await _annotate(h, "HoldA", "HoldB")
        assert (info.gating_plugin, HoldA.calls) == ("HoldB", 0)

        await _annotate(h, "HoldA")  # HoldB lets go; HoldA, asked next, holds it
        assert (info.gating_plugin, HoldA.calls) == ("HoldA", 1)
        assert h.scheduler.queue.locate("default/p") == "gated"

        await _annotate(h)
        await h.schedule_active()
        assert h.node_of("default", "p") == "n1"


async def test_the_five_minute_flush_does_not_ask_a_plugin_that_registers_no_events() -> None:
    # Without `events_to_register` a plugin is taken to care for every kind kube-scheduler
    # watches, not for every event: the flush, a wildcard, leaves its pods where they are.
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        h.create([make_node("n1").dict()])
        h.create([make_pod("p").annotation("hold.example.com/HoldA", "").dict()])
        await h.quiesce()
        asked = HoldA.calls
        h.clock.advance(301)
        h.scheduler.queue.flush_unschedulable_leftover()
        await h.quiesce()
        assert HoldA.calls == asked
        assert h.scheduler.queue.locate("default/p") == "gated"
        h.create([make_node("n2").dict()])  # a Node event: HoldA may have changed its mind
        await h.quiesce()
        assert HoldA.calls == asked + 1
