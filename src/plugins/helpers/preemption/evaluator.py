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
from datetime import datetime

from plugins.helpers.preemption.candidate_order import pick_best
from plugins.helpers.preemption.candidates import Candidate
from plugins.helpers.preemption.candidates import DryRunResult
from plugins.helpers.preemption.candidates import VictimSelector
from plugins.helpers.preemption.candidates import dry_run
from plugins.helpers.preemption.disruption_budgets import PDB_RESOURCE
from plugins.helpers.preemption.disruption_budgets import list_budgets
from plugins.helpers.preemption.messages import NO_CANDIDATE
from plugins.helpers.preemption.messages import aggregate
from plugins.helpers.preemption.messages import no_candidates_message
from plugins.helpers.preemption.messages import with_prefix
from plugins.helpers.preemption.preparation import PreemptionExecutor
from scheduler.framework import SUCCESS
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import ExtenderError
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
        return self._carry_out(pod, self.plan(state, pod, statuses))

    async def preempt_awaiting(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        """`preempt` for a pod the HTTP extenders are consulted about: those with a preempt
        verb see the candidates, and may drop nodes or change victims, before one is chosen."""
        self._handle.plugin_metrics.preemption_attempt()
        now = self._handle.clock.wall()
        found = self._candidates(state, pod, statuses, now)
        if not isinstance(found, PreemptionPlan):
            found = await self._after_extenders(pod, found)
        plan = found if isinstance(found, PreemptionPlan) else _choose(found, now)
        return self._carry_out(pod, _prefixed(plan))

    def plan(self, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> PreemptionPlan:
        """Choose the node and victims without touching the cluster (`explain` shows this)."""
        now = self._handle.clock.wall()
        found = self._candidates(state, pod, statuses, now)
        return _prefixed(found if isinstance(found, PreemptionPlan) else _choose(found, now))

    def _carry_out(self, pod: Pod, plan: PreemptionPlan) -> tuple[PostFilterResult | None, Status]:
        if plan.chosen is not None:
            self.executor.start(pod, plan.chosen)
        return plan.result, plan.status

    def _candidates(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader, now: datetime
    ) -> tuple[Candidate, ...] | PreemptionPlan:
        """The dry run's candidates, or the plan that ends preemption before any is chosen."""
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
        run = DryRunResult()
        if potential:
            budgets = list_budgets(self._handle.lister(PDB_RESOURCE))
            offset, wanted = self._preemptor.candidate_window(len(potential))
            select = self._preemptor.select_victims
            run = dry_run(self._handle, select, state, pod, potential, budgets, offset, wanted, now)
        if not run.candidates:
            if run.errors:
                return PreemptionPlan(None, Status.from_error(aggregate(run.errors)))
            # Clear any earlier nomination: preemption cannot help anywhere now.
            message = no_candidates_message(table.size, run.statuses)
            cleared = PostFilterResult(nominated_node_name="")
            return PreemptionPlan(cleared, Status.unschedulable(message))
        return tuple(run.candidates)

    async def _after_extenders(
        self, pod: Pod, candidates: tuple[Candidate, ...]
    ) -> tuple[Candidate, ...] | PreemptionPlan:
        """The candidates the extenders with a preempt verb keep, in dry-run order (a node
        only an extender named comes after), each one's victims in the order the extenders
        gave them: upstream keeps that order, takes the first victim's priority as the
        candidate's highest, and preempts the last victim last."""
        extenders = self._handle.extenders
        if not extenders.interested_in_preemption(pod):
            return candidates
        offered = {c.node_name: c.victims for c in candidates}
        try:
            kept = await extenders.process_preemption(pod, offered, self._pods_on)
        except ExtenderError as exc:
            return PreemptionPlan(None, Status.from_error(str(exc)), candidates)
        names = [c.node_name for c in candidates if c.node_name in kept]
        names += [name for name in kept if name not in offered]
        return tuple(Candidate(name, kept[name]) for name in names)

    def _pods_on(self, node_name: str) -> list[Pod] | None:
        info = self._handle.node_info(node_name)
        return None if info is None else list(info.pods.values())


def _choose(candidates: tuple[Candidate, ...], now: datetime) -> PreemptionPlan:
    best = pick_best(candidates, now)
    if best is None:
        return PreemptionPlan(None, Status.unschedulable(NO_CANDIDATE), candidates)
    nominated = PostFilterResult(nominated_node_name=best.node_name)
    return PreemptionPlan(nominated, SUCCESS, candidates, best)


def _prefixed(plan: PreemptionPlan) -> PreemptionPlan:
    """The plan with its message as the FailedScheduling text shows it."""
    return PreemptionPlan(plan.result, with_prefix(plan.status), plan.candidates, plan.chosen)


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

    async def post_filter_awaiting(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        return await self.evaluator.preempt_awaiting(state, pod, statuses)

    def plan(self, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> PreemptionPlan:
        """Choose the node and victims without touching the cluster."""
        return self.evaluator.plan(state, pod, statuses)
