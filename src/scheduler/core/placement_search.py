"""The scheduling algorithm of one attempt: PreFilter, Filter (the nominated node, or else the
node hint of opportunistic batching, alone first, then every node), PostFilter when nothing
fits, PreScore, Score, and a random tie-break between the best.

`PlacementSearch.run` is the whole of it, synchronous. Its phases (`feasible`,
`decided_or_scored`, `post_filter`, `select`) are public so that `extender_placement.py` can
consult HTTP extenders between them, and await PostFilter (`post_filter_awaiting`), which may
ask them too.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scheduler.core.outcome import BatchTurn
from scheduler.core.outcome import Failure
from scheduler.core.outcome import Placement
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import NO_NODES_AVAILABLE
from scheduler.framework.diagnosis import Diagnosis
from scheduler.framework.node_info import counted_nominations
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import NominatingMode
from scheduler.framework.plugins import PostFilterResult
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.observability import get_logger
from scheduler.runtime.framework import Framework

_log = get_logger("scheduler")


@dataclass(slots=True)
class Feasible:
    """The rows that passed PreFilter and Filter, and why the others did not."""

    rows: np.ndarray
    diagnosis: Diagnosis
    # True when the rows are the pod's nominated node alone, tried first.
    nominated_only: bool = False


@dataclass(frozen=True, slots=True)
class Unfit:
    """No node fits: PostFilter's turn. `status` is the rejection that ends the search (a
    PreFilter plugin's, or a bare Unschedulable when every node was filtered out)."""

    diagnosis: Diagnosis
    status: Status


@dataclass(frozen=True, slots=True)
class PlacementSearch:
    """What one attempt's search reads: the profile, the attempt's cycle state, the pod, the
    live node table, the queue's nominated pods by node name (pods that preempted room on a
    node and wait for it), and the attempt's part in opportunistic batching (None where
    nothing may be reused or kept, as in `explain`)."""

    framework: Framework
    state: CycleState
    pod: Pod
    table: NodeTable
    nominations: Mapping[str, Sequence[Pod]]
    batch: BatchTurn | None = None

    def run(self) -> Placement | Failure:
        """The node for the pod, or the failure the attempt ends with."""
        found = self.feasible()
        if isinstance(found, Unfit):
            return self.post_filter(found)
        if isinstance(found, Failure):
            return found
        totals = self.decided_or_scored(found)
        if isinstance(totals, Unfit):
            return self.post_filter(totals)
        if not isinstance(totals, np.ndarray):
            return totals
        return self.select(found.rows, totals)

    def feasible(self, *, try_nominated: bool = True) -> Feasible | Failure | Unfit:
        """PreFilter and Filter (the nominated node, or else the batch's hint, alone first):
        the feasible rows, the failure the attempt ends with, or Unfit when PreFilter rejected
        the pod."""
        framework, state, pod, table, batch = (
            self.framework,
            self.state,
            self.pod,
            self.table,
            self.batch,
        )
        if table.size == 0:
            status = Status.unresolvable(NO_NODES_AVAILABLE)
            return Failure(status, NO_NODES_AVAILABLE)
        diagnosis = Diagnosis(table)
        pre = framework.run_pre_filter(state, pod, table)
        diagnosis.unschedulable_plugins.update(pre.narrowing_plugins)
        if not pre.status.is_success:
            if not pre.status.is_rejected:
                return Failure(pre.status, pre.status.message())
            diagnosis.pre_filter_message = pre.status.message()
            diagnosis.mark_absent(np.empty(0, dtype=np.int64), pre.status)
            return Unfit(diagnosis, pre.status)
        allowed = None
        if pre.result is not None and pre.result.node_names is not None:
            rows = [table.row_of(name) for name in pre.result.node_names]
            allowed = np.array(sorted(r for r in rows if r is not None), dtype=np.int64)
            absent = Status.unresolvable(pre.unsatisfied_message())
            diagnosis.mark_absent(allowed, absent)
        nominated = _nominated_by_row(self.nominations, table, pod)
        if try_nominated:
            if batch is not None:
                batch.hint = framework.batch.node_hint(state, pod, batch.signature, batch.cycle)
            first = pod.nominated_node_name or (batch.hint if batch is not None else "")
            only = self._one_node_first(first, nominated)
            if only is not None:
                return Feasible(only, diagnosis, nominated_only=True)
        feasible = framework.find_feasible(state, pod, table, allowed, diagnosis, nominated)
        if isinstance(feasible, Status):
            return Failure(feasible, feasible.message())
        return Feasible(feasible, diagnosis)

    def decided_or_scored(self, found: Feasible) -> Placement | Failure | Unfit | np.ndarray:
        """No feasible node (Unfit: PostFilter's turn) or exactly one (chosen without scoring)
        decide the attempt; otherwise the rows' totals from PreScore, Score, NormalizeScore
        and weights."""
        if not len(found.rows):
            return Unfit(found.diagnosis, Status.unschedulable())
        if len(found.rows) == 1:
            node = self.table.names[int(found.rows[0])]
            if self.batch is not None:
                batch = self.batch
                self.framework.batch.store(batch.signature, batch.hint, node, batch.cycle)
            return Placement(node, self.table.size, 1)
        return self._scored(found.rows)

    def _scored(self, rows: np.ndarray) -> np.ndarray | Failure:
        """PreScore, Score, NormalizeScore and weights: the total of each row."""
        framework, state, pod, table = self.framework, self.state, self.pod, self.table
        status = framework.run_pre_score(state, pod, table, rows)
        if not status.is_success:
            return Failure(status, status.message())
        totals = framework.run_score(state, pod, table, rows)
        if isinstance(totals, Status):
            return Failure(totals, totals.message())
        return totals

    def select(self, rows: np.ndarray, totals: np.ndarray) -> Placement:
        """The best-scoring row (ties broken at random) as the attempt's placement; the
        ranking is kept for the next pod when batching."""
        row = self.framework.select_host(rows, totals)
        node = self.table.names[row]
        if self.batch is not None:
            batch, scored = self.batch, (rows, totals, row)
            self.framework.batch.store(batch.signature, batch.hint, node, batch.cycle, scored)
        return Placement(node, self.table.size, len(rows))

    def _one_node_first(
        self, node_name: str, nominated: dict[int, Sequence[Pod]]
    ) -> np.ndarray | None:
        """A pod nominated to a node (after preemption), or given a batch's hint, tries that
        node alone first: that row if it fits, else None to search every node.

        As upstream's evaluateNominatedNode, the node is tried whatever PreFilter's node set
        says, and an Error there is only logged: the search over every node decides."""
        if not node_name:
            return None
        row = self.table.row_of(node_name)
        if row is None:
            return None
        info = self.table.node_infos[row]
        status = self.framework.run_filter_with_nominated(
            self.state, self.pod, info, nominated.get(row, ())
        )
        if status.is_success:
            return np.array([row], dtype=np.int64)
        if status.code is Code.ERROR:
            _log.error(
                "Evaluation failed on nominated node",
                pod=self.pod.key,
                node=node_name,
                err=status.message(),
            )
        return None

    def post_filter(self, unfit: Unfit) -> Failure:
        """PostFilter, then the failure the unfit attempt ends with."""
        if not self.framework.post_filter:
            return self._unfit_failure(unfit, None, None)
        answer = self.framework.run_post_filter(self.state, self.pod, unfit.diagnosis)
        return self._unfit_failure(unfit, *answer)

    async def post_filter_awaiting(self, unfit: Unfit) -> Failure:
        """`post_filter` for an attempt that awaits HTTP extenders."""
        if not self.framework.post_filter:
            return self._unfit_failure(unfit, None, None)
        run = self.framework.run_post_filter_awaiting
        answer = await run(self.state, self.pod, unfit.diagnosis)
        return self._unfit_failure(unfit, *answer)

    def _unfit_failure(
        self, unfit: Unfit, result: PostFilterResult | None, post_status: Status | None
    ) -> Failure:
        framework, diagnosis, status = self.framework, unfit.diagnosis, unfit.status
        if post_status is not None:
            # A plugin that broke its contract fails the attempt; an Error it returned is, as
            # upstream has it, only the PostFilter part of the still unschedulable pod's text.
            if framework.is_plugin_fault(post_status):
                return Failure(post_status, post_status.message(), diagnosis)
            if post_status.message():
                diagnosis.post_filter_message = post_status.message()
        failure_status = Status(
            status.code if status.is_rejected else Code.UNSCHEDULABLE, plugin=status.plugin
        )
        # Upstream clears a nomination only when no PostFilter ran or one overrode it; a
        # PostFilter that declined (e.g. victims still terminating on the nominated node)
        # keeps it.
        clear = not framework.post_filter or (
            result is not None and result.mode is NominatingMode.OVERRIDE
        )
        return Failure(
            failure_status, diagnosis.fit_error_message(), diagnosis, result, clear_nomination=clear
        )


def _nominated_by_row(
    nominations: Mapping[str, Sequence[Pod]], table: NodeTable, pod: Pod
) -> dict[int, Sequence[Pod]]:
    """The pods nominated to each row that Filter must count as already there: those of at
    least the pod's priority, other than the pod itself."""
    found: dict[int, Sequence[Pod]] = {}
    for node_name, pods in nominations.items():
        row = table.row_of(node_name)
        if row is None:
            continue
        relevant = counted_nominations(pod, pods)
        if relevant:
            found[row] = relevant
    return found
