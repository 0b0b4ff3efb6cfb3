"""A Bind that fails after the pod was bound after all (its answer lost, say): the informer
already holds the pod on its node, so no room was given back, and the pods waiting for room
are not offered its departure, as upstream offers it only when it forgets the assumed pod."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from scheduler.core.scheduler import Scheduler
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness


class BindsThenFails:
    """Binds through the API, waits until the informer has seen the pod bound, then fails."""

    name = "BindsThenFails"
    scheduler: ClassVar[Scheduler]

    def __init__(self, args: None, handle: Handle) -> None:
        self._handle = handle

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        await self._handle.api.bind(pod, node_name)
        cache = BindsThenFails.scheduler.cache
        for _ in range(10_000):
            if not cache.is_assumed(pod.key):
                break
            await asyncio.sleep(0)  # a turn of the loop for the informer, not a delay
        assert not cache.is_assumed(pod.key)
        return Status.from_error("the answer to the Binding was lost")


CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "bind": {
                    "enabled": [{"name": "BindsThenFails"}],
                    "disabled": [{"name": "DefaultBinder"}],
                }
            },
        }
    ]
}


async def test_pods_waiting_for_room_stay_put_when_the_failed_pod_is_bound_anyway() -> None:
    spec = PluginSpec(name="BindsThenFails", plugin_class=BindsThenFails)
    async with Harness(CONFIG, extra_plugins=[spec]) as h:
        BindsThenFails.scheduler = h.scheduler
        node = make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").dict()
        filler = make_pod("filler").node("n1").req(cpu="1").phase("Running").dict()
        h.create([node, filler, make_pod("waiter").req(cpu="2").dict()])
        await h.schedule_active()
        assert h.scheduler.queue.locate("default/waiter") == "unschedulable"

        h.create([make_pod("lost-answer").req(cpu="1").dict()])
        await h.schedule_active()

        assert h.node_of("default", "lost-answer") == "n1"
        assert h.event_notes("default", "lost-answer", "FailedScheduling") == [
            'running Bind plugin "BindsThenFails": the answer to the Binding was lost'
        ]
        # The node is as full as before: nothing for the waiter to try.
        assert h.scheduler.queue.locate("default/waiter") == "unschedulable"
