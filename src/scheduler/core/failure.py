"""The one failure handler of both cycles: undo what was reserved, record why, requeue.

Every path that fails a pod comes here: the scheduling algorithm finding no node (or failing),
Reserve or Permit turning the chosen node down, waiting at Permit ending in a rejection,
PreBind or Bind failing, and the cycles' own code raising. What it does, in order:

1. `undo` (only after Reserve ran): Unreserve of every Reserve plugin in reverse order, and the
   assumed pod forgotten, unless the informer has meanwhile seen it bound;
2. `record`: the log line, `scheduler_schedule_attempts_total`, the `FailedScheduling` Event,
   the `PodScheduled=False` condition (through the API dispatcher) and the nomination;
3. requeue: the pod goes back to the unschedulable pool or backoff, keyed by the plugins that
   rejected it, so that only an event one of them registered for moves it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from scheduler.cluster.port import ClusterClient
from scheduler.core.api_dispatcher import ApiDispatcher
from scheduler.core.outcome import Attempt
from scheduler.core.outcome import Failure
from scheduler.core.pod_status import failure_status_patch
from scheduler.core.result_annotation import ResultAnnotations
from scheduler.core.services import CyclePart
from scheduler.core.services import CycleServices
from scheduler.framework.events import ASSIGNED_POD_DELETE
from scheduler.framework.plugins import NominatingMode
from scheduler.objects.pod import Pod
from scheduler.observability import V_BIND
from scheduler.observability import V_PLUGIN
from scheduler.observability import enabled
from scheduler.observability import get_logger
from scheduler.observability import log_v
from scheduler.observability.label_values import ERROR
from scheduler.observability.label_values import UNSCHEDULABLE

_log = get_logger("scheduler")


class FailureHandler(CyclePart):
    """Undoes, records and requeues a failed attempt."""

    def __init__(
        self,
        services: CycleServices,
        *,
        dispatcher: ApiDispatcher,
        client: ClusterClient,
        current_pod: Callable[[str], Pod | None],
    ) -> None:
        """`current_pod` is the informer's latest view of a pod by key (None once deleted)."""
        super().__init__(services)
        self._dispatcher = dispatcher
        self._client = client
        self._current_pod = current_pod
        # The latest failure message per pod key, for reports and `explain`.
        self.last_failures: dict[str, str] = {}
        # Pods whose latest attempt failed with Error rather than being rejected.
        self.errored: set[str] = set()
        # Set to record each failure's plugin results on the pod (opt-in, see the module); the
        # binding cycle clears them once the pod is bound.
        self.result_annotations: ResultAnnotations | None = None

    async def settle_writes(self, pod: Pod) -> None:
        """Before the pod's binding: drop what earlier failures of the pod still had to write
        (its condition, nomination, result annotation) and wait for the write under way, so
        none lands on the bound pod; a failure of this attempt writes anew."""
        await self._dispatcher.supersede(pod.key)

    def after_reserve(self, attempt: Attempt, assumed: Pod, node: str, failure: Failure) -> bool:
        """A failure once Reserve ran: undo, then record and requeue. Whether the pod's place
        was given back (see `undo`)."""
        forgot = self.undo(attempt, assumed, node)
        self.handle(attempt, failure)
        return forgot

    def release_place(self, assumed: Pod, *, others_only: bool = False) -> None:
        """The place a failed pod held counts as an assigned pod going away (upstream does the
        same), so pods waiting for that room are retried. `others_only` leaves the pod itself
        where its failure put it."""
        keep = (lambda info: info.pod.uid != assumed.uid) if others_only else None
        self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None, keep)

    def undo(self, attempt: Attempt, assumed: Pod, node: str) -> bool:
        """Unreserve every Reserve plugin (in reverse) and forget the assumed pod, unless the
        informer has meanwhile seen the pod bound (by this or another replica): then the cache
        already holds it as it really is. Whether the pod was forgotten, i.e. its place given
        back (only then do other pods have room to be offered, as upstream's)."""
        attempt.framework.run_unreserve(attempt.state, assumed, node)
        if not self._cache.is_assumed(assumed.key):
            return False
        self._cache.forget_pod(assumed)
        return True

    def handle(self, attempt: Attempt, failure: Failure) -> None:
        """Record the failure (Event, condition, metrics) and put the pod back in the queue."""
        framework, info = attempt.framework, attempt.info
        pod = info.pod
        rejected = failure.status.is_rejected
        _log_failure(pod, failure, rejected)
        result = UNSCHEDULABLE if rejected else ERROR
        elapsed = time.perf_counter() - attempt.started
        self._metrics.schedule_attempt(result, framework.name, elapsed)
        info.unschedulable_plugins = failure.unschedulable_plugins
        info.pending_plugins = failure.pending_plugins
        current = self._current_pod(pod.key)
        if current is not None and not current.node_name and current.uid != pod.uid:
            # Deleted and created again under the same name meanwhile: this failure is not the
            # new pod's, so it gets no Event, condition or nomination from it (as upstream).
            log_v(
                _log,
                V_BIND,
                "Pod was recreated while handling scheduling failure",
                pod=pod.key,
                old_uid=pod.uid,
                new_uid=current.uid,
            )
            self._queue.done(pod)
            return
        if current is not None and not current.node_name:
            info.pod = current
            self._queue.add_unschedulable_if_not_present(info, attempt.cycle)
        self._queue.done(pod)
        # From here on, the pod as the informer has it; a nomination the binding cycle made
        # (before Permit's wait or PreBind) stands even if the informer has not seen it yet.
        pod = info.pod
        standing = attempt.binding_nomination or pod.nominated_node_name
        nominated = ""
        post_filter = failure.post_filter
        if (
            post_filter is not None
            and post_filter.nominated_node_name
            and post_filter.mode is NominatingMode.OVERRIDE  # Noop keeps what stands
        ):
            nominated = post_filter.nominated_node_name
            self._queue.add_nominated_pod(info.pod, nominated)
        elif standing and failure.clear_nomination:
            self._queue.delete_nominated_pod(pod)
        elif standing:
            nominated = standing
        self._recorder.pod_event(
            pod,
            event_type="Warning",
            reason="FailedScheduling",
            action="Scheduling",
            note=failure.message,
            controller=framework.name,
        )
        self._patch_condition(pod, failure, rejected, nominated, standing)
        if self.result_annotations is not None:
            self.result_annotations.failed(pod, failure)
        self.last_failures[pod.key] = failure.message
        if rejected:
            self.errored.discard(pod.key)
        else:
            self.errored.add(pod.key)

    def _patch_condition(
        self, pod: Pod, failure: Failure, rejected: bool, nominated: str, standing: str
    ) -> None:
        patch = failure_status_patch(
            pod,
            message=failure.message,
            rejected=rejected,
            nominated=nominated,
            clear_nomination=failure.clear_nomination,
            now=self._clock.wall(),
            standing_nomination=standing,
        )
        if patch is None:
            return
        client = self._client

        async def send() -> None:
            await client.patch_pod_status(pod.namespace, pod.name, patch)

        self._dispatcher.submit(pod.key, f"status of {pod.key}", send)


def _log_failure(pod: Pod, failure: Failure, rejected: bool) -> None:
    """kube-scheduler's lines: a rejection at -v=2 (per plugin from -v=5), an error always."""
    if not rejected:
        _log.error("Error scheduling pod; retrying", pod=pod.key, err=failure.message)
        return
    log_v(_log, V_BIND, "Unable to schedule pod; no fit; waiting", pod=pod.key, err=failure.message)
    if failure.diagnosis is None or not enabled(V_PLUGIN):
        return
    for plugin, reasons, nodes in failure.diagnosis.rejections_by_plugin():
        log_v(
            _log,
            V_PLUGIN,
            "Plugin rejected nodes",
            pod=pod.key,
            plugin=plugin,
            nodes=nodes,
            reason=", ".join(reasons),
        )
