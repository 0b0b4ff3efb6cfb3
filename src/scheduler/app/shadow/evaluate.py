"""Where the candidate configuration would put a pod: Filter and Score, nothing after.

Shadow mode asks the question the production scheduler has just answered, against the same
cluster state, and stops before anything that acts: no PostFilter (preemption would evict
pods), no Reserve or Permit (plugins may hold state or call out), no assume and no binding.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

import numpy as np

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import NO_NODES_AVAILABLE
from scheduler.framework.diagnosis import Diagnosis
from scheduler.framework.node_table import NodeTable
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime.framework import Framework


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The candidate's view of one pod.

    `scores` holds the weighted total of every feasible node (one feasible node gets no
    scoring, as in a real cycle, and scores 0). `rejections` holds, for every node a Filter
    or PreFilter turned down, the rejecting plugin and its reason. `error` is set when a plugin
    failed, so nothing can be said about the pod.
    """

    scores: dict[str, int] = field(default_factory=dict)
    rejections: dict[str, tuple[str, str]] = field(default_factory=dict)
    fit_error: str = ""
    error: str = ""

    @property
    def best(self) -> list[str]:
        """The nodes with the highest total: the ones the candidate's tie-break picks from."""
        if not self.scores:
            return []
        top = max(self.scores.values())
        return sorted(name for name, score in self.scores.items() if score == top)


def evaluate(framework: Framework, pod: Pod, table: NodeTable) -> Evaluation:
    if table.size == 0:
        return Evaluation(fit_error=NO_NODES_AVAILABLE)
    state = CycleState()
    diagnosis = Diagnosis(table)
    pre = framework.run_pre_filter(state, pod, table)
    if not pre.status.is_success:
        if not pre.status.is_rejected:
            return Evaluation(error=pre.status.message())
        diagnosis.pre_filter_message = pre.status.message()
        diagnosis.mark_absent(np.empty(0, dtype=np.int64), pre.status)
        return _rejected(table, diagnosis)
    allowed = None
    if pre.result is not None and pre.result.node_names is not None:
        rows = [table.row_of(name) for name in pre.result.node_names]
        allowed = np.array(sorted(r for r in rows if r is not None), dtype=np.int64)
        diagnosis.mark_absent(allowed, Status.unresolvable(pre.unsatisfied_message()))
    feasible = framework.find_feasible(state, pod, table, allowed, diagnosis, {})
    if isinstance(feasible, Status):
        return Evaluation(error=feasible.message())
    if not len(feasible):
        return _rejected(table, diagnosis)
    rejections = _rejections(table, diagnosis, feasible)
    if len(feasible) == 1:
        return Evaluation(scores={table.names[int(feasible[0])]: 0}, rejections=rejections)
    status = framework.run_pre_score(state, pod, table, feasible)
    if not status.is_success:
        return Evaluation(error=status.message())
    totals = framework.run_score(state, pod, table, feasible)
    if isinstance(totals, Status):
        return Evaluation(error=totals.message())
    scores = {
        table.names[int(row)]: int(total)
        for row, total in zip(feasible.tolist(), totals.tolist(), strict=True)
    }
    return Evaluation(scores=scores, rejections=rejections)


def _rejected(table: NodeTable, diagnosis: Diagnosis) -> Evaluation:
    empty = np.empty(0, dtype=np.int64)
    return Evaluation(
        rejections=_rejections(table, diagnosis, empty), fit_error=diagnosis.fit_error_message()
    )


def _rejections(
    table: NodeTable, diagnosis: Diagnosis, feasible: np.ndarray
) -> dict[str, tuple[str, str]]:
    passed = set(feasible.tolist())
    found: dict[str, tuple[str, str]] = {}
    for row in range(table.size):
        if row in passed:
            continue
        status = diagnosis.status_of_row(row)
        if status.is_success:
            # Neither feasible nor rejected: left out by a sampled Filter pass.
            continue
        found[table.names[row]] = (status.plugin, status.message())
    return found
