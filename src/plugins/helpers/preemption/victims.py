"""Choosing the victims on one node: the fewest, least important pods whose removal lets the
preemptor fit.

The node and the cycle state given here are copies: the dry run changes them freely.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from datetime import datetime

from plugins.helpers.preemption.disruption_budgets import DisruptionBudget
from plugins.helpers.preemption.disruption_budgets import split_by_violation
from plugins.helpers.preemption.importance import reprieve_order
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework import Victims

NO_VICTIMS_FOUND = "No preemption victims found for incoming pod"


def may_preempt(preemptor: Pod, victim: Pod) -> bool:
    """Only strictly lower priority pods can be preempted."""
    return victim.priority < preemptor.priority


class DryRunNode:
    """A copied node and cycle state for the preemptor `pod`, with the PreFilter extensions
    kept in step as pods are removed and put back."""

    def __init__(self, handle: Handle, state: CycleState, pod: Pod, node_info: NodeInfo) -> None:
        self.handle = handle
        self.state = state
        self.pod = pod
        self.node_info = node_info

    def remove(self, victim: Pod) -> Status:
        self.node_info.remove_pod(victim.key)
        return self.handle.run_pre_filter_extension_remove_pod(
            self.state, self.pod, victim, self.node_info
        )

    def add(self, victim: Pod) -> Status:
        self.node_info.add_pod(victim)
        return self.handle.run_pre_filter_extension_add_pod(
            self.state, self.pod, victim, self.node_info
        )

    def fits(self) -> Status:
        return self.handle.run_filter_plugins_with_nominated_pods(
            self.state, self.pod, self.node_info
        )


def select_victims(
    node: DryRunNode, budgets: Sequence[DisruptionBudget], now: datetime
) -> Victims | Status:
    """The victims on `node`, or the Status saying why preemption cannot help there.

    Every lower-priority pod is removed first; if the pod still does not fit, the node is no
    use (affinity to a victim is deliberately not considered). Then victims are put back one by
    one, most important first and budget-violating ones before the others, keeping each one
    the pod still fits beside. What cannot be put back is the answer.
    """
    pod = node.pod
    potential = [p for p in node.node_info.pods.values() if may_preempt(pod, p)]
    for victim in potential:
        status = node.remove(victim)
        if not status.is_success:
            return extension_error(status)
    if not potential:
        return Status.unresolvable(NO_VICTIMS_FOUND)
    status = node.fits()
    if not status.is_success:
        return status
    return reprieve(node, potential, budgets, now)


def reprieve(
    node: DryRunNode,
    potential: Sequence[Pod],
    budgets: Sequence[DisruptionBudget],
    now: datetime,
    allowed: Callable[[], bool] = lambda: True,
) -> Victims | Status:
    """Put the removed `potential` victims back one by one, most important first and
    budget-violating ones before the others, keeping each one the pod still fits beside (and
    `allowed` still agrees to, for a plugin with rules of its own). What cannot be put back is
    the answer; a victim breaks a budget only if the Filters turned it away, as upstream counts.
    """
    violating, non_violating = split_by_violation(reprieve_order(potential, now), budgets)
    victims: list[Pod] = []
    num_violations = 0
    for group, counts_as_violation in ((violating, True), (non_violating, False)):
        for candidate in group:
            status = node.add(candidate)
            if not status.is_success:
                return extension_error(status)
            fits = node.fits().is_success
            if fits and allowed():
                continue
            status = node.remove(candidate)
            if not status.is_success:
                return extension_error(status)
            victims.append(candidate)
            if counts_as_violation and not fits:
                num_violations += 1
    if violating and non_violating:
        # Taken from both groups, the victims are put in importance order again, sorted as
        # the reprieve order was; from one group they are in that order already.
        victims = reprieve_order(victims, now)
    return Victims(tuple(victims), num_violations)


def extension_error(status: Status) -> Status:
    """A PreFilter extension that cannot follow a hypothetical change is an internal error."""
    return status if status.code is Code.ERROR else Status.from_error(status.message())
