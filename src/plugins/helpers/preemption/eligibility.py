"""Whether a pod may preempt at all in this cycle."""

from __future__ import annotations

from plugins.helpers.preemption.messages import NOT_ELIGIBLE_POLICY_NEVER
from plugins.helpers.preemption.messages import NOT_ELIGIBLE_TERMINATING
from plugins.helpers.preemption.victims import may_preempt
from scheduler.framework import Code
from scheduler.framework import Handle
from scheduler.framework import NodeStatusReader
from scheduler.framework import Pod

PREEMPT_NEVER = "Never"
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def terminating_by_preemption(pod: Pod) -> bool:
    """Being deleted because a scheduler preempted it (its DisruptionTarget condition says so)."""
    if not pod.deleting:
        return False
    for condition in (pod.raw.get("status") or {}).get("conditions") or ():
        if condition.get("type") == DISRUPTION_TARGET:
            return bool(
                condition.get("status") == "True"
                and condition.get("reason") == PREEMPTION_BY_SCHEDULER
            )
    return False


def ineligibility(handle: Handle, pod: Pod, statuses: NodeStatusReader) -> str:
    """Why `pod` may not preempt now ("" if it may).

    A pod that already preempted waits while its victims on the nominated node terminate,
    rather than preempting more pods elsewhere; unless that node can no longer take it at all.
    """
    if pod.preemption_policy == PREEMPT_NEVER:
        return NOT_ELIGIBLE_POLICY_NEVER
    nominated = pod.nominated_node_name
    if not nominated:
        return ""
    if statuses.status_of(nominated).code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return ""
    node_info = handle.node_info(nominated)
    if node_info is None:
        return ""
    for other in node_info.pods.values():
        if may_preempt(pod, other) and terminating_by_preemption(other):
            return NOT_ELIGIBLE_TERMINATING
    return ""
