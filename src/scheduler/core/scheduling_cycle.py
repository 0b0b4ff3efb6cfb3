"""The scheduling cycle: one popped pod, from the checks that skip it to its binding cycle.

It is synchronous (it never awaits, unless an HTTP extender is consulted), so the cache
cannot change under it, and it reads the live node table directly. In order:

1. skip a pod with no profile of ours, one being deleted, one already assumed or bound;
2. `find_placement`: PreFilter, Filter (the nominated node alone first, then every node),
   PostFilter when nothing fits, PreScore, Score, and a random tie-break between the best
   (in phases, `find_feasible`, `decided_or_scored`, `select_placement`, so that
   `extender_placement.py` can consult HTTP extenders between them; that path awaits, and
   the scheduler holds the informers meanwhile);
3. assume the pod on the chosen node, Reserve, Permit;
4. start the binding cycle (`binding_cycle.py`) as a task.

Any failure goes to the one failure handler (`failure.py`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scheduler.core.binding_cycle import BindingCycles
from scheduler.core.failure import FailureHandler
from scheduler.core.outcome import Attempt
from scheduler.core.outcome import BatchTurn
from scheduler.core.outcome import Failure
from scheduler.core.outcome import Placement
from scheduler.core.services import CyclePart
from scheduler.core.services import CycleServices
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import NO_NODES_AVAILABLE
from scheduler.framework.diagnosis import Diagnosis
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import NominatingMode
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.framework.status import raised
from scheduler.objects.pod import Pod
from scheduler.observability import V_ATTEMPT
from scheduler.observability import PluginMetricsSampler
from scheduler.observability import get_logger
from scheduler.observability import log_v
from scheduler.runtime.framework import Framework

_log = get_logger("scheduler")


class SchedulingCycle(CyclePart):
    """Runs the scheduling cycle of one pod at a time."""

    def __init__(
        self,
        services: CycleServices,
        *,
        frameworks: Mapping[str, Framework],
        sampler: PluginMetricsSampler,
        failures: FailureHandler,
        bindings: BindingCycles,
    ) -> None:
        """`frameworks` by schedulerName; `sampler` picks the cycles whose plugin durations are
        recorded."""
        super().__init__(services)
        self._frameworks = frameworks
        self._sampler = sampler
        self._failures = failures
        self._bindings = bindings

    def run(self, info: QueuedPodInfo) -> None:
        """One scheduling cycle; starts the binding cycle as a task if a node was chosen."""
        attempt = self._start(info)
        if attempt is None:
            return
        try:
            outcome = find_placement(
                attempt.framework,
                attempt.state,
                info.pod,
                self._cache.table,
                self._queue.nominated_pods_by_node(),
                attempt.batch,
            )
        except Exception as exc:
            outcome = _algorithm_failed(info.pod, exc)
        self._end(attempt, outcome)

    async def run_awaiting(
        self, info: QueuedPodInfo, place: Callable[[Attempt], Awaitable[Placement | Failure]]
    ) -> None:
        """The same cycle with a placement that awaits (HTTP extenders are consulted): `place`
        chooses the node. The caller keeps the cache still meanwhile."""
        attempt = self._start(info)
        if attempt is None:
            return
        try:
            outcome = await place(attempt)
        except Exception as exc:
            outcome = _algorithm_failed(info.pod, exc)
        self._end(attempt, outcome)

    def _start(self, info: QueuedPodInfo) -> Attempt | None:
        """The attempt for a popped pod, or None for a pod that is skipped."""
        pod = info.pod
        framework = self._frameworks.get(pod.scheduler_name)
        if framework is None:
            self._queue.done(pod)
            return None
        if pod.deleting:
            self._recorder.pod_event(
                pod,
                event_type="Warning",
                reason="FailedScheduling",
                action="Scheduling",
                note=f"skip schedule deleting pod: {pod.key}",
                controller=framework.name,
            )
            self._queue.done(pod)
            return None
        if self._cache.is_assumed(pod.key) or self._cache.get_pod(pod.key) is not None:
            self._queue.done(pod)
            return None
        attempt = Attempt(
            framework=framework,
            state=CycleState(),
            info=info,
            cycle=self._queue.scheduling_cycle,
            started=time.perf_counter(),
        )
        attempt.state.record_plugin_metrics = self._sampler.sample()
        if framework.batch.enabled:
            signature = framework.batch.sign(attempt.state, pod)
            attempt.batch = BatchTurn(signature, attempt.cycle)
        log_v(_log, V_ATTEMPT, "Attempting to schedule pod", pod=pod.key, profile=framework.name)
        return attempt

    def _end(self, attempt: Attempt, outcome: Placement | Failure) -> None:
        self._metrics.scheduling_algorithm_duration(time.perf_counter() - attempt.started)
        if isinstance(outcome, Failure):
            self._failures.handle(attempt, outcome)
            return
        self._assume_and_reserve(attempt, outcome)

    def _assume_and_reserve(self, attempt: Attempt, placement: Placement) -> None:
        pod, framework, state = attempt.info.pod, attempt.framework, attempt.state
        node = placement.node_name
        assumed = self._cache.assume_pod(pod, node)
        if pod.nominated_node_name:
            self._queue.delete_nominated_pod(pod)
        status = framework.run_reserve(state, assumed, node)
        if status.is_success:
            status = framework.run_permit(state, assumed, node)
        if not status.is_success and not status.is_wait:
            self._failures.after_reserve(attempt, assumed, node, Failure.at_chosen_node(status))
            return
        if state.pods_to_activate:
            self._queue.activate(state.pods_to_activate.values())
            state.pods_to_activate.clear()
        self._bindings.start(attempt, assumed, node)


# ---- the scheduling algorithm: PreFilter through choosing a node ------------------------------


def _algorithm_failed(pod: Pod, exc: Exception) -> Failure:
    # Plugins' faults are Error statuses already; this is the algorithm failing on this pod.
    # Like upstream, the pod fails with Error and is retried after backoff.
    message = f"running the scheduling algorithm: {raised(exc)}"
    _log.error("Error scheduling pod", pod=pod.key, err=message, exc_info=exc)
    return Failure(Status.from_error(message), message)


@dataclass(slots=True)
class Feasible:
    """The rows that passed PreFilter and Filter, and why the others did not."""

    rows: np.ndarray
    diagnosis: Diagnosis
    # True when the rows are the pod's nominated node alone, tried first.
    nominated_only: bool = False


def find_placement(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    nominations: Mapping[str, Sequence[Pod]],
    batch: BatchTurn | None = None,
) -> Placement | Failure:
    """`nominations` are the queue's nominated pods by node name (pods that preempted room on
    a node and wait for it); `batch` is the attempt's part in opportunistic batching (None
    where nothing may be reused or kept, as in `explain`)."""
    found = find_feasible(framework, state, pod, table, nominations, batch)
    if isinstance(found, Failure):
        return found
    totals = decided_or_scored(framework, state, pod, table, found, batch)
    if not isinstance(totals, np.ndarray):
        return totals
    return select_placement(framework, table, found.rows, totals, batch)


def find_feasible(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    nominations: Mapping[str, Sequence[Pod]],
    batch: BatchTurn | None = None,
    *,
    try_nominated: bool = True,
) -> Feasible | Failure:
    """PreFilter and Filter (the nominated node, or else the batch's hint, alone first): the
    feasible rows, or the failure the attempt ends with."""
    if table.size == 0:
        status = Status.unresolvable(NO_NODES_AVAILABLE)
        return Failure(status, NO_NODES_AVAILABLE)
    diagnosis = Diagnosis(table)
    pre = framework.run_pre_filter(state, pod, table)
    if not pre.status.is_success:
        if not pre.status.is_rejected:
            return Failure(pre.status, pre.status.message())
        diagnosis.pre_filter_message = pre.status.message()
        diagnosis.mark_absent(np.empty(0, dtype=np.int64), pre.status)
        return _post_filter(framework, state, pod, diagnosis, pre.status)
    allowed = None
    if pre.result is not None and pre.result.node_names is not None:
        rows = [table.row_of(name) for name in pre.result.node_names]
        allowed = np.array(sorted(r for r in rows if r is not None), dtype=np.int64)
        absent = Status.unresolvable(pre.unsatisfied_message())
        diagnosis.mark_absent(allowed, absent)
    nominated = _nominated_by_row(nominations, table, pod)
    if try_nominated:
        if batch is not None:
            batch.hint = framework.batch.node_hint(state, pod, batch.signature, batch.cycle)
        first = pod.nominated_node_name or (batch.hint if batch is not None else "")
        only = _one_node_first(framework, state, pod, table, first, allowed, nominated)
        if isinstance(only, Status):
            return Failure(only, only.message())
        if only is not None:
            return Feasible(only, diagnosis, nominated_only=True)
    feasible = framework.find_feasible(state, pod, table, allowed, diagnosis, nominated)
    if isinstance(feasible, Status):
        return Failure(feasible, feasible.message())
    return Feasible(feasible, diagnosis)


def decided_or_scored(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    found: Feasible,
    batch: BatchTurn | None = None,
) -> Placement | Failure | np.ndarray:
    """No feasible node (PostFilter's turn) or exactly one (chosen without scoring) decide the
    attempt; otherwise the rows' totals from PreScore, Score, NormalizeScore and weights."""
    if not len(found.rows):
        return _post_filter(framework, state, pod, found.diagnosis, Status.unschedulable())
    if len(found.rows) == 1:
        node = table.names[int(found.rows[0])]
        if batch is not None:
            framework.batch.store(batch.signature, batch.hint, node, batch.cycle)
        return Placement(node, table.size, 1)
    return score_feasible(framework, state, pod, table, found.rows)


def score_feasible(
    framework: Framework, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray
) -> np.ndarray | Failure:
    """PreScore, Score, NormalizeScore and weights: the total of each row."""
    status = framework.run_pre_score(state, pod, table, rows)
    if not status.is_success:
        return Failure(status, status.message())
    totals = framework.run_score(state, pod, table, rows)
    if isinstance(totals, Status):
        return Failure(totals, totals.message())
    return totals


def select_placement(
    framework: Framework,
    table: NodeTable,
    rows: np.ndarray,
    totals: np.ndarray,
    batch: BatchTurn | None = None,
) -> Placement:
    """The best-scoring row (ties broken at random) as the attempt's placement; the ranking
    is kept for the next pod when batching."""
    row = framework.select_host(rows, totals)
    node = table.names[row]
    if batch is not None:
        scored = (rows, totals, row)
        framework.batch.store(batch.signature, batch.hint, node, batch.cycle, scored)
    return Placement(node, table.size, len(rows))


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
        relevant = [p for p in pods if p.priority >= pod.priority and p.uid != pod.uid]
        if relevant:
            found[row] = relevant
    return found


def _one_node_first(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    node_name: str,
    allowed: np.ndarray | None,
    nominated: dict[int, Sequence[Pod]],
) -> np.ndarray | Status | None:
    """A pod nominated to a node (after preemption), or given a batch's hint, tries that node
    alone first: that row if it fits, an Error status that fails the attempt, or None to
    search every node."""
    if not node_name:
        return None
    row = table.row_of(node_name)
    if row is None or (allowed is not None and row not in set(allowed.tolist())):
        return None
    status = framework.run_filter_with_nominated(
        state, pod, table.node_infos[row], nominated.get(row, ())
    )
    if status.is_success:
        return np.array([row], dtype=np.int64)
    if status.code is Code.ERROR:
        return status
    return None


def _post_filter(
    framework: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, status: Status
) -> Failure:
    result = None
    if framework.post_filter:
        result, post_status = framework.run_post_filter(state, pod, diagnosis)
        # A plugin that broke its contract fails the attempt; an Error it returned is, as
        # upstream has it, only the PostFilter part of the still unschedulable pod's text.
        if framework.is_plugin_fault(post_status):
            return Failure(post_status, post_status.message(), diagnosis)
        if post_status.message():
            diagnosis.post_filter_message = post_status.message()
    failure_status = Status(
        status.code if status.is_rejected else Code.UNSCHEDULABLE, plugin=status.plugin
    )
    # Upstream clears a nomination only when no PostFilter ran or one overrode it; a PostFilter
    # that declined (e.g. victims still terminating on the nominated node) keeps it.
    clear = not framework.post_filter or (
        result is not None and result.mode is NominatingMode.OVERRIDE
    )
    return Failure(
        failure_status, diagnosis.fit_error_message(), diagnosis, result, clear_nomination=clear
    )
