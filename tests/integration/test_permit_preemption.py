"""A pod waiting at Permit that preemption picks as a victim: it is preempted where it waits,
not deleted, and its binding cycle fails with an Error, as upstream's WaitOnPermit words it."""

from __future__ import annotations

from typing import Any

from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness
from tests.integration.test_preemption_sim import CONFIG
from tests.integration.test_preemption_sim import extra_plugins
from tests.integration.test_preemption_sim import settle

PERMIT_TIMEOUT = 600.0


class Approval:
    """Permit: pods labelled `approval=required` wait (for an approval that never comes)."""

    name = "Approval"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        if pod.labels.get("approval") == "required":
            return Status.wait(), PERMIT_TIMEOUT
        return Status(), 0.0


PROFILE = CONFIG["profiles"][0]
WITH_APPROVAL: dict[str, Any] = {
    "profiles": [
        {
            **PROFILE,
            "plugins": {**PROFILE["plugins"], "permit": {"enabled": [{"name": "Approval"}]}},
        }
    ]
}


async def test_a_victim_waiting_at_permit_fails_with_an_error_and_is_not_deleted() -> None:
    specs = [*extra_plugins(), PluginSpec(name="Approval", plugin_class=Approval)]
    async with Harness(WITH_APPROVAL, extra_plugins=specs) as h:
        h.create([make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").dict()])
        h.create([make_pod("low").req(cpu="2").labels(approval="required").dict()])
        await h.schedule_active()
        assert len(h.scheduler.waiting_pods) == 1

        h.create([make_pod("vip").req(cpu="2").priority(100).dict()])
        await h.schedule_active()
        await settle(h)

        notes = h.event_notes("default", "low", "FailedScheduling")
        assert notes == ["waiting on permit for pod: preempted"]
        condition = next(
            c
            for c in h.pod("default", "low")["status"]["conditions"]
            if c["type"] == "PodScheduled"
        )
        assert (condition["status"], condition["reason"]) == ("False", "SchedulerError")
        # Error backoff, not the unschedulable pool a rejection would have sent it to.
        assert h.scheduler.queue.locate("default/low") == "backoff"
        assert h.node_of("default", "low") is None
        assert "low" in {p["metadata"]["name"] for p in h.sim.objects("pods")}
        registry = h.scheduler.metrics.registry
        waits = registry.get_sample_value(
            "scheduler_permit_wait_duration_seconds_count", {"result": "Error"}
        )
        assert waits == 1
