"""The scheduling cycle: one popped pod, from the checks that skip it to its binding cycle.

It is synchronous (it never awaits, unless an HTTP extender is consulted), so the cache
cannot change under it, and it reads the live node table directly. In order:

1. skip a pod with no profile of ours, one being deleted, one already assumed or bound;
2. `PlacementSearch.run` (`placement_search.py`): PreFilter, Filter, PostFilter when nothing
   fits, PreScore, Score, and a random tie-break between the best (or
   `extender_placement.py`, which consults HTTP extenders between its phases; that path
   awaits, and the scheduler holds the informers meanwhile);
3. assume the pod on the chosen node, Reserve, Permit;
4. start the binding cycle (`binding_cycle.py`) as a task.

Any failure goes to the one failure handler (`failure.py`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping

from scheduler.core.binding_cycle import BindingCycles
from scheduler.core.failure import FailureHandler
from scheduler.core.outcome import Attempt
from scheduler.core.outcome import BatchTurn
from scheduler.core.outcome import Failure
from scheduler.core.outcome import Placement
from scheduler.core.placement_search import PlacementSearch
from scheduler.core.services import CyclePart
from scheduler.core.services import CycleServices
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.queued_pod import QueuedPodInfo
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
            search = PlacementSearch(
                attempt.framework,
                attempt.state,
                info.pod,
                self._cache.table,
                self._queue.nominated_pods_by_node(),
                attempt.batch,
            )
            outcome = search.run()
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
        held = self._cache.get_pod(pod.key)
        if held is not None and held.uid != pod.uid:
            # A pod of the same name, deleted since, is still assumed: the cache knows pods by
            # name, so this one waits in backoff until the old one is forgotten.
            log_v(_log, V_ATTEMPT, "Pod waits for its predecessor to leave", pod=pod.key)
            self._queue.add_unschedulable_if_not_present(info, self._queue.scheduling_cycle)
            return None
        if self._cache.is_assumed(pod.key) or held is not None:
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
        # Whatever the pod object says: the nominator may hold a nomination the informer has
        # not brought back yet, and the assumed pod must not count twice.
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


def _algorithm_failed(pod: Pod, exc: Exception) -> Failure:
    # Plugins' faults are Error statuses already; this is the algorithm failing on this pod.
    # Like upstream, the pod fails with Error and is retried after backoff.
    message = f"running the scheduling algorithm: {raised(exc)}"
    _log.error("Error scheduling pod", pod=pod.key, err=message, exc_info=exc)
    return Failure(Status.from_error(message), message)
