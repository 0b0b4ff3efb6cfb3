"""CapacityScheduling's preemption: reclaim lent capacity, else make room in the namespace.

The shared evaluator does what all preemption does (candidate nodes, budgets, the choice, the
background work); this module says who may go, as scheduler-plugins' preemptor does:

- the preemptor's namespace, with the pod and the nominated pods ahead of it, stays within its
  min: its guarantee has been lent out, so pods of other quota'd namespaces using more than
  their min may go (whatever their priority) until they are back at their min;
- it would pass its min: only lower-priority pods of its own namespace may go;
- it has no quota: only lower-priority pods of namespaces without a quota may go, as with
  DefaultPreemption.

Per node, every potential victim is removed, the pod must then fit (every Filter plugin, and for
a quota'd namespace its max and the sum of mins); victims are then given back, most important
first and budget-breaking ones before the others, while the pod still fits and the quotas allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from plugins.capacity_scheduling.cycle_state import STATE_KEY
from plugins.capacity_scheduling.cycle_state import QuotaState
from plugins.helpers.preemption import NOT_ELIGIBLE_POLICY_NEVER
from plugins.helpers.preemption import NOT_ELIGIBLE_TERMINATING
from plugins.helpers.preemption import PREEMPT_NEVER
from plugins.helpers.preemption import DisruptionBudget
from plugins.helpers.preemption import DryRunNode
from plugins.helpers.preemption import Victims
from plugins.helpers.preemption import extension_error
from plugins.helpers.preemption import least_important_first
from plugins.helpers.preemption import reprieve
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeStatusReader
from scheduler.framework import Pod
from scheduler.framework import Status

NO_STATE = "not eligible due to failed to read from cycleState"
NO_STATE_FOR_VICTIMS = "Failed to read preFilterState from cycleState"
QUOTA_EXCEEDED = "global quota max exceeded"


def quota_status(state: QuotaState, pod: Pod) -> Status:
    """PreFilter: whether `pod` may join its namespace's use: under max with the nominated pods
    ahead of it, and borrowing only unused min."""
    usage = state.usage
    quota = usage.quotas.get(pod.namespace)
    if quota is None:
        return Status()
    if quota.over_max(usage.used_by(pod.namespace), state.with_nominated_in_quota):
        return Status.unschedulable(
            f"Pod {pod.key} is rejected in PreFilter because ElasticQuota {quota.namespace} "
            "is more than Max"
        )
    if usage.over_total_min(state.with_all_nominated):
        return Status.unschedulable(
            f"Pod {pod.key} is rejected in PreFilter because total ElasticQuota used is more "
            "than min"
        )
    return Status()


def ineligibility(handle: Handle, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> str:
    """Why `pod` may not preempt now ("" if it may): as DefaultPreemption's rule, except that
    which terminating pods on the nominated node count depends on the quotas."""
    if pod.preemption_policy == PREEMPT_NEVER:
        return NOT_ELIGIBLE_POLICY_NEVER
    quotas = state.get(STATE_KEY, QuotaState)
    if quotas is None:
        return NO_STATE
    nominated = pod.nominated_node_name
    if not nominated or statuses.status_of(nominated).code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return ""
    node_info = handle.node_info(nominated)
    if node_info is None:
        return ""
    for other in node_info.pods.values():
        if other.deleting and _makes_room(quotas, pod, other):
            return NOT_ELIGIBLE_TERMINATING
    return ""


def _makes_room(quotas: QuotaState, pod: Pod, terminating: Pod) -> bool:
    """Whether the pod could have taken `terminating`: one of its own namespace's less
    important pods, or, while its namespace is within its min, a borrower's."""
    reclaiming = pod.namespace in quotas.usage.quotas and not quotas.beyond_min(pod.namespace)
    return _may_go(quotas, pod, terminating, reclaiming=False) or (
        reclaiming and _may_go(quotas, pod, terminating, reclaiming=True)
    )


def select_victims(
    node: DryRunNode, budgets: Sequence[DisruptionBudget], now: datetime
) -> Victims | Status:
    """The victims on `node`, whose copied cycle state has the quota use the PreFilter
    extensions keep in step with every pod removed or given back."""
    quotas = node.state.get(STATE_KEY, QuotaState)
    if quotas is None:
        return Status.unschedulable(NO_STATE_FOR_VICTIMS)
    pod, node_info = node.pod, node.node_info
    namespace = pod.namespace
    reclaiming = namespace in quotas.usage.quotas and not quotas.beyond_min(namespace)
    potential: list[Pod] = []
    # Least important first: a lender's use falls as its pods are taken, and once it is back
    # at its min its more important pods stay. Equal pods keep the order upstream's sort gives
    # them, which decides which of them go.
    for other in least_important_first(node_info.pods.values(), now):
        if _may_go(quotas, pod, other, reclaiming=reclaiming):
            potential.append(other)
            status = node.remove(other)
            if not status.is_success:
                return extension_error(status)
    if not potential:
        return Status.unresolvable(
            f"No victims found on node {node_info.name} for preemptor pod {pod.name}"
        )
    status = node.fits()
    if not status.is_success:
        return status
    if not quotas.within_quota(namespace, quotas.request, quotas.request):
        return Status.unschedulable(QUOTA_EXCEEDED)
    own, overall = quotas.with_nominated_in_quota, quotas.with_all_nominated
    return reprieve(
        node, potential, budgets, now, lambda: quotas.within_quota(namespace, own, overall)
    )


def _may_go(quotas: QuotaState, pod: Pod, other: Pod, *, reclaiming: bool) -> bool:
    """Whether `other` is a potential victim of `pod`, reclaiming lent min or not."""
    usage = quotas.usage
    theirs = usage.quotas.get(other.namespace)
    if pod.namespace not in usage.quotas:
        return theirs is None and other.priority < pod.priority
    if theirs is None:
        return False
    if reclaiming:
        return other.namespace != pod.namespace and theirs.over_min(usage.used_by(other.namespace))
    return other.namespace == pod.namespace and other.priority < pod.priority
