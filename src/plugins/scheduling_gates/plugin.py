"""SchedulingGates: keeps pods with spec.schedulingGates out of the active queue."""

from __future__ import annotations

from plugins.helpers import after_own_update
from plugins.helpers.plugin_bases import NoArgsPlugin
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import Pod
from scheduler.framework import Status


def waiting_for_gates_message(gates: tuple[str, ...]) -> str:
    # Upstream formats the gate names as a Go string slice: "[a b]".
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


class SchedulingGates(NoArgsPlugin):
    name = "SchedulingGates"

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_gates:
            return SUCCESS
        return Status.unresolvable(waiting_for_gates_message(pod.scheduling_gates))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Only the gated pod's own update can release it.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                after_own_update,
            )
        ]
