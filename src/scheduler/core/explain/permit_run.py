"""What follows the choice of a node: Reserve and Permit, and the end of a Permit wait.

A pod that passes every Filter can still stay pending: Reserve or Permit turns it away at the
chosen node, or Permit holds it there (a gang member waits for its siblings). So `explain`
goes on as the scheduling cycle does, on its own throwaway snapshot: it assumes the pod on the
node, runs Reserve, then Permit. When Permit answers Wait, the pods it brought forward (the
siblings Coscheduling activates) are taken through the same cycle in turn, PostFilter only
planning as for the pod itself. Whatever they do to the wait (a quorum allows it, a sibling
that fits nowhere rejects it) is how the wait ends; a wait nothing ends times out.

It runs last, once everything else in the report is computed, since it changes the snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from scheduler.core.explain.dry_post_filter import dry_profile
from scheduler.core.explain.evaluation import verdict_of
from scheduler.core.explain.model import ALLOWED
from scheduler.core.explain.model import ERROR
from scheduler.core.explain.model import GATED
from scheduler.core.explain.model import NOT_REACHED
from scheduler.core.explain.model import REJECTED
from scheduler.core.explain.model import SCHEDULABLE
from scheduler.core.explain.model import TIMES_OUT
from scheduler.core.explain.model import UNSCHEDULABLE
from scheduler.core.explain.model import WAITING
from scheduler.core.explain.model import Companion
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.model import PermitReport
from scheduler.core.explain.model import PostFilterReport
from scheduler.core.explain.model import Verdict
from scheduler.core.outcome import Failure
from scheduler.core.placement_search import PlacementSearch
from scheduler.core.scheduler import Scheduler
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime.framework import Framework
from scheduler.runtime.reservation import PermitAnswer
from scheduler.runtime.waiting_pods import MAX_PERMIT_WAIT_SECONDS
from scheduler.runtime.waiting_pods import timed_out_message


class _Cycle:
    """Assume, Reserve and Permit on the explain snapshot, as the scheduling cycle runs them."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler

    def place(
        self, framework: Framework, state: CycleState, pod: Pod, node: str
    ) -> tuple[Status, Status | None, list[PermitAnswer]]:
        """Reserve's status, then Permit's (None if Reserve failed) and each plugin's answer.
        A failure gives the place back, as the scheduler's failure handler does."""
        assumed = self._scheduler.cache.assume_pod(pod, node)
        self._scheduler.queue.delete_nominated_pod(pod)
        reserved = framework.run_reserve(state, assumed, node)
        answers: list[PermitAnswer] = []
        permitted = None
        if reserved.is_success:
            permitted = framework.run_permit(state, assumed, node, answers)
        turned_away = permitted is None or not (permitted.is_success or permitted.is_wait)
        if turned_away:
            framework.run_unreserve(state, assumed, node)
            self._scheduler.cache.forget_pod(assumed)
        return reserved, permitted, answers

    def search(self, framework: Framework, state: CycleState, pod: Pod) -> Failure | str:
        """The scheduler's node for `pod` on the snapshot as it now stands, or its failure;
        PostFilter plans and records only."""
        reports: list[PostFilterReport] = []
        nominations = self._scheduler.queue.nominated_pods_by_node()
        table = self._scheduler.cache.table
        found = PlacementSearch(dry_profile(framework, reports), state, pod, table, nominations)
        outcome = found.run()
        return outcome if isinstance(outcome, Failure) else outcome.node_name


def _failure_outcome(status: Status) -> str:
    return UNSCHEDULABLE if status.is_rejected else ERROR


def _verdicts(answers: Iterable[PermitAnswer]) -> list[Verdict]:
    return [verdict_of(a.plugin, a.status.with_plugin(a.plugin)) for a in answers]


def _companion(cycle: _Cycle, scheduler: Scheduler, pod: Pod) -> tuple[Companion, list[Pod]]:
    """`pod` through one cycle: what became of it, and the pods its own Permit brought
    forward."""
    framework = scheduler.profiles.get(pod.scheduler_name)
    if framework is None:
        return Companion(pod.key, UNSCHEDULABLE, "", "no profile of ours schedules it"), []
    gate = framework.run_pre_enqueue(pod)
    if not gate.is_success:
        return Companion(pod.key, GATED, "", gate.message()), []
    state = CycleState()
    found = cycle.search(framework, state, pod)
    if isinstance(found, Failure):
        return Companion(pod.key, _failure_outcome(found.status), "", found.message), []
    reserved, permitted, _ = cycle.place(framework, state, pod, found)
    activated = list(state.pods_to_activate.values())
    status = permitted if permitted is not None else reserved
    if status.is_success:
        return Companion(pod.key, SCHEDULABLE, found, ""), activated
    if status.is_wait:
        return Companion(pod.key, WAITING, found, ""), activated
    message = Failure.at_chosen_node(status).message
    return Companion(pod.key, _failure_outcome(status), found, message), activated


def _bring_forward(
    cycle: _Cycle, scheduler: Scheduler, pod: Pod, first: Iterable[Pod], report: PermitReport
) -> dict[str, str]:
    """The pods Permit activated, and those theirs did, each once, until the pod's wait
    ends or none is left. The UIDs of those left waiting, by position in the report."""
    waiting = scheduler.waiting_pods.get(pod.uid)
    pending = list(first)
    seen = {pod.key}
    left_waiting: dict[str, str] = {}
    while pending and waiting is not None and not waiting.ended:
        other = pending.pop(0)
        if other.key in seen or other.node_name:
            continue
        seen.add(other.key)
        companion, activated = _companion(cycle, scheduler, other)
        report.companions.append(companion)
        if companion.outcome == WAITING:
            left_waiting[companion.pod] = other.uid
        pending.extend(activated)
    return left_waiting


async def _ended_waits(scheduler: Scheduler, report: PermitReport, uids: dict[str, str]) -> None:
    """Companions whose wait has ended since their turn are shown as it ended."""
    for i, companion in enumerate(report.companions):
        waiting = scheduler.waiting_pods.get(uids.get(companion.pod, ""))
        if waiting is None or not waiting.ended:
            continue
        status = await waiting.wait()
        if status.is_success:
            report.companions[i] = replace(companion, outcome=SCHEDULABLE)
        else:
            message = Failure.at_chosen_node(status).message
            outcome = _failure_outcome(status)
            report.companions[i] = replace(companion, outcome=outcome, message=message)


async def _wait_result(scheduler: Scheduler, pod: Pod) -> Status | None:
    """How the pod's wait ended (None if it has not), then every wait of the snapshot ended
    so that no timer outlives the report."""
    waiting = scheduler.waiting_pods.get(pod.uid)
    result = await waiting.wait() if waiting is not None and waiting.ended else None
    for other in scheduler.waiting_pods:
        other.reject("", "explain is done")
    return result


def _timed_out(report: PermitReport) -> Status:
    """The rejection a wait nothing ends gets: from the plugin with the shortest timeout."""
    plugin = min(report.timeouts, key=lambda name: (report.timeouts[name], name))
    wait = min(report.timeouts[plugin], MAX_PERMIT_WAIT_SECONDS)
    return Status.unschedulable(timed_out_message(plugin, wait)).with_plugin(plugin)


async def follow_placement(
    scheduler: Scheduler,
    framework: Framework,
    pod: Pod,
    state: CycleState,
    explanation: Explanation,
) -> None:
    """Reserve and Permit for the node `explanation` chose, with the cycle state its search
    left; the outcome and message then say how the attempt really ends."""
    node = explanation.chosen_node
    cycle = _Cycle(scheduler)
    reserved, permitted, answers = cycle.place(framework, state, pod, node)
    report = PermitReport(node, ALLOWED, plugins=_verdicts(answers))
    report.timeouts = {
        a.plugin: min(a.timeout, MAX_PERMIT_WAIT_SECONDS) for a in answers if a.status.is_wait
    }
    explanation.permit = report
    final: Status | None
    if permitted is None:
        report.result = NOT_REACHED
        report.reserve = verdict_of("Reserve", reserved)
        final = reserved
    elif permitted.is_wait:
        activated = state.pods_to_activate.values()
        uids = _bring_forward(cycle, scheduler, pod, activated, report)
        await _ended_waits(scheduler, report, uids)
        final = await _wait_result(scheduler, pod)
        if final is None:
            report.result = TIMES_OUT
            explanation.outcome = WAITING
            final = _timed_out(report)
        elif final.is_success:
            return
        else:
            report.result = REJECTED
    elif permitted.is_success:
        return
    else:
        report.result = REJECTED
        final = permitted
    if explanation.outcome != WAITING:
        explanation.outcome = _failure_outcome(final)
    explanation.message = Failure.at_chosen_node(final).message
