"""Preemption as a PostFilter plugin runs it, whichever plugin decides the victims.

Upstream keeps this in one Evaluator that DefaultPreemption and out-of-tree preemptors such as
CapacityScheduling share, each supplying what differs (its `preemption.Interface`): whether the
pod may preempt now, how many nodes the dry run tries, and which pods of a node would go. The
rest is common: the nodes where preemption might help, the dry run over copies of them, the
choice among candidates, the texts, and carrying the choice out in the background.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plugins.helpers.preemption.candidate_order import pick_best
from plugins.helpers.preemption.candidates import Candidate
from plugins.helpers.preemption.candidates import DryRunResult
from plugins.helpers.preemption.candidates import VictimSelector
from plugins.helpers.preemption.candidates import dry_run
from plugins.helpers.preemption.disruption_budgets import PDB_RESOURCE
from plugins.helpers.preemption.disruption_budgets import list_budgets
from plugins.helpers.preemption.messages import NO_CANDIDATE
from plugins.helpers.preemption.messages import no_candidates_message
from plugins.helpers.preemption.messages import with_prefix
from plugins.helpers.preemption.preparation import PreemptionExecutor
from scheduler.framework import SUCCESS
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


@dataclass(frozen=True, slots=True)
class Preemptor:
    """What a preempting plugin decides for itself."""

    # Why the pod may not preempt in this cycle, or "" if it may.
    ineligibility: Callable[[CycleState, Pod, NodeStatusReader], str]
    # Given how many nodes preemption might help on: where the dry run starts among them, and
    # how many candidates it wants before it stops.
    candidate_window: Callable[[int], tuple[int, int]]
    select_victims: VictimSelector


class Evaluator:
    """Plans preemptions with a `Preemptor` and carries the chosen ones out."""

    def __init__(self, handle: Handle, plugin_name: str, preemptor: Preemptor) -> None:
        self._handle = handle
        self._preemptor = preemptor
        self.executor = PreemptionExecutor(handle, plugin_name)

    def preempt(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter: plan, then start the chosen preemption in the background."""
        self._handle.plugin_metrics.preemption_attempt()
        plan = self.plan(state, pod, statuses)
        if plan.chosen is not None:
            self.executor.start(pod, plan.chosen)
        return plan.result, plan.status

    def plan(self, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> PreemptionPlan:
        """Choose the node and victims without touching the cluster (`explain` shows this)."""
        plan = self._plan(state, pod, statuses)
        return PreemptionPlan(plan.result, with_prefix(plan.status), plan.candidates, plan.chosen)

    def _plan(self, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> PreemptionPlan:
        reason = self._preemptor.ineligibility(state, pod, statuses)
        if reason:
            # No result: the pod keeps its nomination while its victims terminate.
            return PreemptionPlan(None, Status.unschedulable(reason))
        table = self._handle.node_table
        if table.size == 0:
            return PreemptionPlan(None, Status.from_error("no nodes available"))
        # Only nodes where some Filter said Unschedulable; UnschedulableAndUnresolvable ones
        # cannot be helped by removing pods.
        potential = sorted(
            statuses.nodes_with_code(int(Code.UNSCHEDULABLE)),
            key=lambda name: _row(table.row_of(name)),
        )
        now = self._handle.clock.wall()
        run = DryRunResult()
        if potential:
            budgets = list_budgets(self._handle.lister(PDB_RESOURCE))
            offset, wanted = self._preemptor.candidate_window(len(potential))
            select = self._preemptor.select_victims
            run = dry_run(self._handle, select, state, pod, potential, budgets, offset, wanted, now)
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


def _row(row: int | None) -> int:
    return row if row is not None else -1


class PreemptingPostFilter:
    """PostFilter, and the `plan` that `explain` asks for instead, of a plugin whose preemption
    runs on an `Evaluator` (which the plugin sets up as `self.evaluator`)."""

    evaluator: Evaluator

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        return self.evaluator.preempt(state, pod, statuses)

    def plan(self, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> PreemptionPlan:
        """Choose the node and victims without touching the cluster."""
        return self.evaluator.plan(state, pod, statuses)
