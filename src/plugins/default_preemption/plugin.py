"""DefaultPreemption: when no node fits, make room on one by preempting lower-priority pods."""

from __future__ import annotations

from dataclasses import dataclass

from plugins.default_preemption.args import DefaultPreemptionArgs
from plugins.default_preemption.args import num_candidates
from plugins.default_preemption.candidate_order import pick_best
from plugins.default_preemption.candidates import Candidate
from plugins.default_preemption.candidates import DryRunResult
from plugins.default_preemption.candidates import dry_run
from plugins.default_preemption.disruption_budgets import PDB_RESOURCE
from plugins.default_preemption.disruption_budgets import list_budgets
from plugins.default_preemption.eligibility import ineligibility
from plugins.default_preemption.hints import preemption_events
from plugins.default_preemption.messages import NO_CANDIDATE
from plugins.default_preemption.messages import WAITING_FOR_PREEMPTION
from plugins.default_preemption.messages import no_candidates_message
from plugins.default_preemption.messages import with_prefix
from plugins.default_preemption.preparation import PreemptionExecutor
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeStatusReader
from scheduler.framework import Pod
from scheduler.framework import PostFilterResult
from scheduler.framework import Status


@dataclass(frozen=True, slots=True)
class PreemptionPlan:
    """What preemption would do for a pod, decided but not yet carried out."""

    result: PostFilterResult | None
    status: Status
    candidates: tuple[Candidate, ...] = ()
    chosen: Candidate | None = None


class DefaultPreemption:
    """PostFilter (preemption) and PreEnqueue (holding a preemptor back while its victims go).

    Preemption is asynchronous, as upstream's default since v1.33: the cycle picks the node and
    the victims, nominates the preemptor, and leaves the API calls to a background task.
    """

    name = "DefaultPreemption"

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Handle) -> None:
        self.args = args or DefaultPreemptionArgs()
        self.handle = handle
        self.executor = PreemptionExecutor(handle, self.name)

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        plan = self.plan(state, pod, statuses)
        if plan.chosen is not None:
            self.executor.start(pod, plan.chosen)
        return plan.result, plan.status

    def plan(self, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> PreemptionPlan:
        """Choose the node and victims without touching the cluster (`explain` shows this)."""
        plan = self._plan(state, pod, statuses)
        return PreemptionPlan(plan.result, with_prefix(plan.status), plan.candidates, plan.chosen)

    def _plan(self, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> PreemptionPlan:
        reason = ineligibility(self.handle, pod, statuses)
        if reason:
            # No result: the pod keeps its nomination while its victims terminate.
            return PreemptionPlan(None, Status.unschedulable(reason))
        table = self.handle.node_table
        if table.size == 0:
            return PreemptionPlan(None, Status.from_error("no nodes available"))
        # Only nodes where some Filter said Unschedulable; UnschedulableAndUnresolvable ones
        # cannot be helped by removing pods.
        potential = sorted(
            statuses.nodes_with_code(int(Code.UNSCHEDULABLE)),
            key=lambda name: _row(table.row_of(name)),
        )
        now = self.handle.clock.wall()
        run = DryRunResult()
        if potential:
            budgets = list_budgets(self.handle.lister(PDB_RESOURCE))
            offset = self.handle.rng.randrange(len(potential))
            wanted = num_candidates(self.args, len(potential))
            run = dry_run(self.handle, state, pod, potential, budgets, offset, wanted, now)
        if not run.candidates:
            if run.errors:
                return PreemptionPlan(None, Status.from_error(", ".join(run.errors)))
            # Clear any earlier nomination: preemption cannot help anywhere now.
            message = no_candidates_message(table.size, run.statuses)
            cleared = PostFilterResult(nominated_node_name="")
            return PreemptionPlan(cleared, Status.unschedulable(message))
        candidates = tuple(run.candidates)
        best = pick_best(run.candidates, now)
        if best is None:
            return PreemptionPlan(None, Status.unschedulable(NO_CANDIDATE), candidates)
        nominated = PostFilterResult(nominated_node_name=best.node_name)
        return PreemptionPlan(nominated, SUCCESS, candidates, best)

    def pre_enqueue(self, pod: Pod) -> Status:
        if self.executor.is_running(pod.uid):
            return Status.unresolvable(WAITING_FOR_PREEMPTION)
        return SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return preemption_events()


def _row(row: int | None) -> int:
    return row if row is not None else -1
