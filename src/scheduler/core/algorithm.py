"""The synchronous part of a scheduling attempt: PreFilter through choosing a node."""

from __future__ import annotations

from collections.abc import Sequence

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


def find_placement(
    profile: Profile,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    filter_run: FilterRun,
) -> Placement | Failure:
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
        feasible = _nominated_node_first(profile, state, pod, table, allowed, nominated)
        if feasible is None:
            feasible = filter_run.find_feasible(
                profile, state, pod, table, allowed, diagnosis, nominated
            )
    except PluginError as error:
        return Failure(error.status, error.status.message())
    if not len(feasible):
        return _post_filter(profile, state, pod, diagnosis, Status.unschedulable())
    if len(feasible) == 1:
        return Placement(table.names[int(feasible[0])], table.size, 1)
    status = run_pre_score(profile, state, pod, table, feasible)
    if not status.is_success:
        return Failure(status, status.message())
    try:
        totals = run_score(profile, state, pod, table, feasible)
    except PluginError as error:
        return Failure(error.status, error.status.message())
    row = select_host(feasible, totals, profile.handle.rng)
    return Placement(table.names[row], table.size, len(feasible))


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
