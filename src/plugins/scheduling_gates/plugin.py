"""SchedulingGates: keeps pods with spec.schedulingGates out of the active queue."""

from __future__ import annotations

from plugins.helpers import pod_change
from plugins.helpers.plugin_bases import NoArgsPlugin
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework import Status


def waiting_for_gates_message(gates: tuple[str, ...]) -> str:
    # Upstream formats the gate names as a Go string slice: "[a b]".
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


def is_schedulable_after_gates_eliminated(pod: Pod, old: object, new: object) -> QueueingHint:
    """Only the gated pod's own update can release it."""
    _, updated = pod_change(old, new)
    return QueueingHint.QUEUE if updated.uid == pod.uid else QueueingHint.QUEUE_SKIP


class SchedulingGates(NoArgsPlugin):
    name = "SchedulingGates"

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_gates:
            return SUCCESS
        return Status.unresolvable(waiting_for_gates_message(pod.scheduling_gates))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                is_schedulable_after_gates_eliminated,
            )
        ]
