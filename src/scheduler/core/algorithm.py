"""The synchronous part of a scheduling attempt: PreFilter through choosing a node."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scheduler.core.outcome import Failure, Placement
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import NominatingMode
from scheduler.framework.status import Code, Status
from scheduler.objects.pod import Pod
from scheduler.runtime.diagnosis import NO_NODES_AVAILABLE, Diagnosis
from scheduler.runtime.filtering import FilterError, FilterRun
from scheduler.runtime.invoke import PluginError, PluginFault
from scheduler.runtime.postfilter import run_post_filter
from scheduler.runtime.prefilter import run_pre_filter
from scheduler.runtime.profile import Profile
from scheduler.runtime.scoring import run_pre_score, run_score, select_host


def _nominated_by_row(profile: Profile, table: NodeTable, pod: Pod) -> dict[int, Sequence[Pod]]:
    found: dict[int, Sequence[Pod]] = {}
    nominated_nodes = getattr(profile.handle, "queue", None)
    if nominated_nodes is None:
        return found
    for node_name, pods in nominated_nodes.nominated_pods_by_node().items():
        row = table.row_of(node_name)
        if row is None:
            continue
        relevant = [p for p in pods if p.priority >= pod.priority and p.uid != pod.uid]
        if relevant:
            found[row] = relevant
    return found


@dataclass(slots=True)
class Feasible:
    """The rows that passed PreFilter and Filter, and why the others did not."""

    rows: np.ndarray
    diagnosis: Diagnosis
    # True when the rows are the pod's nominated node alone, tried first.
    nominated_only: bool = False


def find_placement(
    profile: Profile,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    filter_run: FilterRun,
) -> Placement | Failure:
    found = find_feasible(profile, state, pod, table, filter_run)
    if isinstance(found, Failure):
        return found
    totals = decided_or_scored(profile, state, pod, table, found)
    if not isinstance(totals, np.ndarray):
        return totals
    return select_placement(profile, table, found.rows, totals)


def find_feasible(
    profile: Profile,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    filter_run: FilterRun,
    *,
    try_nominated: bool = True,
) -> Feasible | Failure:
    """PreFilter and Filter (the nominated node alone first, if any): the feasible rows, or
    the failure the attempt ends with."""
    if table.size == 0:
        status = Status.unresolvable(NO_NODES_AVAILABLE)
        return Failure(status, NO_NODES_AVAILABLE)
    diagnosis = Diagnosis(table)
    pre = run_pre_filter(profile, state, pod, table)
    if not pre.status.is_success:
        if not pre.status.is_rejected:
            return Failure(pre.status, pre.status.message())
        diagnosis.pre_filter_message = pre.status.message()
        diagnosis.mark_absent(np.empty(0, dtype=np.int64), pre.status)
        return _post_filter(profile, state, pod, diagnosis, pre.status)
    allowed = None
    if pre.result is not None and pre.result.node_names is not None:
        rows = [table.row_of(name) for name in pre.result.node_names]
        allowed = np.array(sorted(r for r in rows if r is not None), dtype=np.int64)
        absent = Status.unresolvable(pre.unsatisfied_message())
        diagnosis.mark_absent(allowed, absent)
    nominated = _nominated_by_row(profile, table, pod)
    try:
        feasible = None
        if try_nominated:
            feasible = _nominated_node_first(profile, state, pod, table, allowed, nominated)
        if feasible is not None:
            return Feasible(feasible, diagnosis, nominated_only=True)
        feasible = filter_run.find_feasible(
            profile, state, pod, table, allowed, diagnosis, nominated
        )
    except PluginError as error:
        return Failure(error.status, error.status.message())
    return Feasible(feasible, diagnosis)


def decided_or_scored(
    profile: Profile, state: CycleState, pod: Pod, table: NodeTable, found: Feasible
) -> Placement | Failure | np.ndarray:
    """No feasible node (PostFilter's turn) or exactly one (chosen without scoring) decide the
    attempt; otherwise the rows' totals from PreScore, Score, NormalizeScore and weights."""
    if not len(found.rows):
        return _post_filter(profile, state, pod, found.diagnosis, Status.unschedulable())
    if len(found.rows) == 1:
        return Placement(table.names[int(found.rows[0])], table.size, 1)
    return score_feasible(profile, state, pod, table, found.rows)


def score_feasible(
    profile: Profile, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray
) -> np.ndarray | Failure:
    """PreScore, Score, NormalizeScore and weights: the total of each row."""
    status = run_pre_score(profile, state, pod, table, rows)
    if not status.is_success:
        return Failure(status, status.message())
    try:
        return run_score(profile, state, pod, table, rows)
    except PluginError as error:
        return Failure(error.status, error.status.message())


def select_placement(
    profile: Profile, table: NodeTable, rows: np.ndarray, totals: np.ndarray
) -> Placement:
    row = select_host(rows, totals, profile.handle.rng)
    return Placement(table.names[row], table.size, len(rows))


def _nominated_node_first(
    profile: Profile,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    allowed: np.ndarray | None,
    nominated: dict[int, Sequence[Pod]],
) -> np.ndarray | None:
    """A pod nominated to a node (after preemption) tries that node alone first."""
    if not pod.nominated_node_name:
        return None
    row = table.row_of(pod.nominated_node_name)
    if row is None or (allowed is not None and row not in set(allowed.tolist())):
        return None
    status = profile.chain.run_with_nominated(
        state, pod, table.node_infos[row], nominated.get(row, ())
    )
    if status.is_success:
        return np.array([row], dtype=np.int64)
    if status.code is Code.ERROR:
        raise FilterError(status)
    return None


def _post_filter(
    profile: Profile, state: CycleState, pod: Pod, diagnosis: Diagnosis, status: Status
) -> Failure:
    result = None
    if profile.post_filter:
        result, post_status = run_post_filter(profile, state, pod, diagnosis)
        # A plugin that broke its contract fails the attempt; an Error it returned is, as
        # upstream has it, only the PostFilter part of the still unschedulable pod's text.
        if isinstance(post_status, PluginFault):
            return Failure(post_status, post_status.message(), diagnosis)
        if post_status.message():
            diagnosis.post_filter_message = post_status.message()
    failure_status = Status(
        status.code if status.is_rejected else Code.UNSCHEDULABLE, plugin=status.plugin
    )
    # Upstream clears a nomination only when no PostFilter ran or one overrode it; a PostFilter
    # that declined (e.g. victims still terminating on the nominated node) keeps it.
    clear = not profile.post_filter or (
        result is not None and result.mode is NominatingMode.OVERRIDE
    )
    return Failure(
        failure_status, diagnosis.fit_error_message(), diagnosis, result, clear_nomination=clear
    )
