"""The scheduler: informer events in, one pod at a time through the cycle, bindings out."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from scheduler.backend.cache import SchedulerCache
from scheduler.backend.queue import SchedulingQueue
from scheduler.cluster.informer import Informer
from scheduler.cluster.port import ClusterClient
from scheduler.config import EffectiveProfile, KubeSchedulerConfiguration
from scheduler.core.algorithm import find_placement
from scheduler.core.api_dispatcher import ApiDispatcher
from scheduler.core.event_recorder import EventRecorder
from scheduler.core.event_sink import EventSink
from scheduler.core.extender_placement import find_placement_with_extenders
from scheduler.core.fencing import FencedClusterAPI, Tenure
from scheduler.core.handle_impl import SchedulerHandle
from scheduler.core.outcome import Failure, Placement
from scheduler.core.pod_events import PodEventHandlers
from scheduler.core.pod_status import failure_status_patch
from scheduler.core.result_annotation import ResultAnnotations
from scheduler.framework.clock import Clock
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ASSIGNED_POD_DELETE
from scheduler.framework.handle import Lister
from scheduler.framework.plugins import MetricsReporter
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.spec import PluginSpec
from scheduler.framework.status import Code, Status
from scheduler.objects.pod import Pod
from scheduler.observability import (
    V_ATTEMPT,
    V_BIND,
    V_PLUGIN,
    PluginMetricsSampler,
    SchedulerMetrics,
    enabled,
    get_logger,
    log_v,
)
from scheduler.runtime.binding import run_bind, run_post_bind, run_pre_bind
from scheduler.runtime.extenders import ExtenderChain
from scheduler.runtime.filtering import FilterRun
from scheduler.runtime.invoke import guarded_less, raised
from scheduler.runtime.profile import Profile
from scheduler.runtime.reservation import run_permit, run_reserve, run_unreserve, wait_on_permit
from scheduler.runtime.waiting_pods import WaitingPods

_log = get_logger("scheduler")


@dataclass(slots=True)
class Attempt:
    """One scheduling attempt of one pod, from pop to bind or failure."""

    profile: Profile
    state: CycleState
    info: QueuedPodInfo
    cycle: int
    started: float
    bound: bool = False


# Informers the core always runs; plugins add their own through PluginSpec.watches.
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


class Scheduler:
    def __init__(
        self,
        *,
        config: KubeSchedulerConfiguration,
        profiles: Sequence[EffectiveProfile],
        registry: Mapping[str, PluginSpec],
        client: ClusterClient,
        clock: Clock,
        rng: random.Random | None = None,
        metrics: SchedulerMetrics | None = None,
        instance: str = "0",
        vectorize: bool = True,
        max_in_unschedulable: float = 300.0,
        events_client: ClusterClient | None = None,
        tenure: Tenure | None = None,
    ) -> None:
        """`events_client` writes Events (its own rate budget; `client` by default); with a
        `tenure` (the leader elector), Bindings and other placement writes are fenced by it."""
        self.config = config
        self.client = client
        self.clock = clock
        self.rng = rng or random.Random()
        self.metrics = metrics or SchedulerMetrics()
        self.cache = SchedulerCache()
        self.waiting_pods = WaitingPods()
        self.dispatcher = ApiDispatcher()
        self.events = EventSink(events_client or client, clock, metrics=self.metrics)
        writes = FencedClusterAPI(client, tenure, clock) if tenure is not None else None
        self.background: set[asyncio.Task[None]] = set()
        self.binding_tasks: set[asyncio.Task[None]] = set()
        self.filter_run = FilterRun()
        self.extenders = ExtenderChain(config.extenders, goroutines=self.metrics.goroutines)
        # True while an attempt awaits extenders: the popped pod is neither queued nor binding.
        self.awaiting_extenders = False
        # Plugin timings are recorded for a sample of cycles, as upstream does (10 %).
        self.sampler = PluginMetricsSampler(self.rng)
        watches = sorted({w for p in profiles for ref in _names(p) for w in registry[ref].watches})
        self.informers: dict[str, Informer] = {}
        self._extra_resources = watches
        listers: dict[str, Lister] = {}
        self.profiles: dict[str, Profile] = {}
        handles: list[SchedulerHandle] = []
        for effective in profiles:
            handle = SchedulerHandle(
                profile_name=effective.scheduler_name,
                clock=clock,
                rng=self.rng,
                parallelism=config.parallelism,
                cache=self.cache,
                client=client,
                listers=listers,
                waiting_pods=self.waiting_pods,
                tasks=self.background,
                api=writes,
            )
            handles.append(handle)
            self.profiles[effective.scheduler_name] = Profile(
                effective, registry, handle, self.waiting_pods, self.metrics, vectorize=vectorize
            )
        first = next(iter(self.profiles.values()))
        if first.queue_sort is None:
            raise ValueError("no queue sort plugin is enabled")
        self.queue = SchedulingQueue(
            less=guarded_less(first.queue_sort.name, first.queue_sort.less),
            clock=clock,
            pre_enqueue=self._pre_enqueue,
            hints={name: p.queueing_hints() for name, p in self.profiles.items()},
            initial_backoff=float(config.pod_initial_backoff_seconds),
            max_backoff=float(config.pod_max_backoff_seconds),
            observer=self.metrics,
            max_in_unschedulable=max_in_unschedulable,
        )
        self.recorder = EventRecorder(self.events, clock, instance)
        for handle in handles:
            handle.queue = self.queue
            handle.recorder = self.recorder
            handle.chain = self.profiles[handle.profile_name].chain
        self.handlers = PodEventHandlers(self)
        self._listers = listers
        self.metrics.set_pending_pods_source(self.queue.pending_counts)
        self.metrics.set_unschedulable_pods_source(self.queue.unschedulable_plugin_counts)
        self.metrics.set_cache_size_source(self.cache.sizes)
        for profile in self.profiles.values():
            for plugin in profile.plugins.values():
                if isinstance(plugin, MetricsReporter):
                    self.metrics.add_plugin_samples_source(plugin.metric_samples)
        # The latest failure message per pod key, for reports and `explain`.
        self.last_failures: dict[str, str] = {}
        # Pods whose latest attempt failed with Error rather than being rejected.
        self.errored: set[str] = set()
        # Set to record each failure's plugin results on the pod (opt-in, see the module).
        self.result_annotations: ResultAnnotations | None = None
        # Set when the scheduler's own machinery failed; it must not go on holding pods.
        self.fatal_error: BaseException | None = None
        self._fatal_listeners: list[Callable[[BaseException], None]] = []

    # ---- informers -------------------------------------------------------------------------

    def build_informers(self) -> list[Informer]:
        h = self.handlers
        informers = [
            Informer(
                self.client,
                "nodes",
                clock=self.clock,
                name="nodes",
                on_add=h.node_added,
                on_update=h.node_updated,
                on_delete=h.node_deleted,
            ),
            Informer(
                self.client,
                "pods",
                clock=self.clock,
                name="pods",
                field_selector=POD_FIELD_SELECTOR,
                on_add=h.pod_added,
                on_update=h.pod_updated,
                on_delete=h.pod_deleted,
            ),
        ]
        # Plugins may read pods too (Coscheduling counts a group's members).
        self._listers["pods"] = next(i.store for i in informers if i.resource == "pods")
        for resource in self._extra_resources:
            informer = Informer(
                self.client,
                resource,
                clock=self.clock,
                name=resource,
                on_add=h.object_added(resource),
                on_update=h.object_updated(resource),
                on_delete=h.object_deleted(resource),
            )
            self._listers[resource] = informer.store
            informers.append(informer)
        self.informers = {i.name: i for i in informers}
        return informers

    # ---- the loop ----------------------------------------------------------------------

    def _pre_enqueue(self, pod: Pod) -> Status:
        profile = self.profiles.get(pod.scheduler_name)
        status = profile.run_pre_enqueue(pod) if profile is not None else Status()
        if status.code is Code.ERROR:
            # Held at the gate by a failing plugin: reported like any other Error.
            self.last_failures[pod.key] = status.message()
            self.errored.add(pod.key)
        return status

    def responsible_for(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    async def run(self) -> None:
        """Pop and schedule until cancelled (only the leader calls this)."""
        self.start_api_writers()
        while True:
            info = await self.queue.pop_wait()
            await self.schedule_next(info)
            await asyncio.sleep(0)

    async def schedule_next(self, info: QueuedPodInfo) -> None:
        """One scheduling cycle, awaited only when an HTTP extender is interested in the pod:
        the informers' handlers wait meanwhile, so the cache stands still as in `schedule_one`."""
        if not self.extenders.interested_in(info.pod):
            self.schedule_one(info)
            return
        attempt = self._start_attempt(info)
        if attempt is None:
            return
        for informer in self.informers.values():
            informer.hold()
        self.awaiting_extenders = True
        try:
            outcome = await self._guarded(
                attempt,
                find_placement_with_extenders(
                    attempt.profile,
                    attempt.state,
                    info.pod,
                    self.cache.table,
                    self.filter_run,
                    self.extenders,
                ),
            )
            self._end_attempt(attempt, outcome)
        finally:
            self.awaiting_extenders = False
            for informer in self.informers.values():
                informer.release()

    def schedule_one(self, info: QueuedPodInfo) -> None:
        """One scheduling cycle; starts the binding cycle as a task if a node was chosen."""
        attempt = self._start_attempt(info)
        if attempt is None:
            return
        try:
            outcome: Placement | Failure = find_placement(
                attempt.profile, attempt.state, info.pod, self.cache.table, self.filter_run
            )
        except Exception as exc:
            outcome = self._algorithm_failed(attempt, exc)
        self._end_attempt(attempt, outcome)

    async def _guarded(
        self, attempt: Attempt, placing: Awaitable[Placement | Failure]
    ) -> Placement | Failure:
        try:
            return await placing
        except Exception as exc:
            return self._algorithm_failed(attempt, exc)

    def _algorithm_failed(self, attempt: Attempt, exc: Exception) -> Failure:
        # Plugins' faults are Error statuses already; this is the algorithm failing on this
        # pod. Like upstream, the pod fails with Error and is retried after backoff.
        message = f"running the scheduling algorithm: {raised(exc)}"
        _log.error("Error scheduling pod", pod=attempt.info.pod.key, err=message, exc_info=exc)
        return Failure(Status.from_error(message), message)

    def _start_attempt(self, info: QueuedPodInfo) -> Attempt | None:
        pod = info.pod
        profile = self.profiles.get(pod.scheduler_name)
        if profile is None:
            self.queue.done(pod)
            return None
        if pod.deleting:
            self.recorder.pod_event(
                pod,
                event_type="Warning",
                reason="FailedScheduling",
                action="Scheduling",
                note=f"skip schedule deleting pod: {pod.key}",
                controller=profile.name,
            )
            self.queue.done(pod)
            return None
        if self.cache.is_assumed(pod.key) or self.cache.get_pod(pod.key) is not None:
            self.queue.done(pod)
            return None
        attempt = Attempt(
            profile=profile,
            state=CycleState(),
            info=info,
            cycle=self.queue.scheduling_cycle,
            started=time.perf_counter(),
        )
        attempt.state.record_plugin_metrics = self.sampler.sample()
        log_v(_log, V_ATTEMPT, "Attempting to schedule pod", pod=pod.key, profile=profile.name)
        return attempt

    def _end_attempt(self, attempt: Attempt, outcome: Placement | Failure) -> None:
        self.metrics.scheduling_algorithm_duration(time.perf_counter() - attempt.started)
        if isinstance(outcome, Failure):
            self.handle_failure(attempt, outcome)
            return
        self._reserve_and_bind(attempt, outcome)

    def _reserve_and_bind(self, attempt: Attempt, placement: Placement) -> None:
        pod, profile, state = attempt.info.pod, attempt.profile, attempt.state
        node = placement.node_name
        assumed = self.cache.assume_pod(pod, node)
        if pod.nominated_node_name:
            self.queue.delete_nominated_pod(pod)
        status = run_reserve(profile, state, assumed, node)
        if status.is_success:
            status = run_permit(profile, state, assumed, node)
        if not status.is_success and not status.is_wait:
            self._undo(attempt, assumed, node)
            self.handle_failure(attempt, Failure.at_chosen_node(status))
            return
        if state.pods_to_activate:
            self.queue.activate(state.pods_to_activate.values())
            state.pods_to_activate.clear()
        task = asyncio.create_task(
            self._binding_cycle(attempt, assumed, node), name=f"bind:{pod.key}"
        )
        self.binding_tasks.add(task)
        task.add_done_callback(self.binding_tasks.discard)
        self.watch(task)

    def _undo(self, attempt: Attempt, assumed: Pod, node: str) -> None:
        """Unreserve every Reserve plugin (in reverse) and forget the assumed pod, unless the
        informer has meanwhile seen the pod bound (by this or another replica): then the cache
        already holds it as it really is."""
        run_unreserve(attempt.profile, attempt.state, assumed, node)
        if self.cache.is_assumed(assumed.key):
            self.cache.forget_pod(assumed)

    async def _binding_cycle(self, attempt: Attempt, assumed: Pod, node: str) -> None:
        try:
            await self._bind(attempt, assumed, node)
        except asyncio.CancelledError:
            # Shut down mid-cycle: give back what was reserved unless the Binding was made.
            if not attempt.bound and self.cache.is_assumed(assumed.key):
                self._undo(attempt, assumed, node)
            raise
        except Exception as exc:
            # Plugins' faults arrive as statuses; this is the cycle's own code failing. The pod
            # must not be lost: unless it was bound, it fails with Error and is retried.
            message = f"running the binding cycle: {raised(exc)}"
            _log.error("Error binding pod", pod=assumed.key, node=node, err=message, exc_info=exc)
            if attempt.bound:
                return
            if self.cache.is_assumed(assumed.key):
                self._undo(attempt, assumed, node)
            self.handle_failure(attempt, Failure(Status.from_error(message), message))

    async def _bind(self, attempt: Attempt, assumed: Pod, node: str) -> None:
        profile, state, info = attempt.profile, attempt.state, attempt.info
        status = await wait_on_permit(profile, assumed)
        if not status.is_success:
            self._undo(attempt, assumed, node)
            self.handle_failure(attempt, Failure.at_chosen_node(status))
            # The place it held is free again, as if an assigned pod went away (upstream does
            # the same); the pod itself is left where its failure put it.
            self.queue.move_all_to_active_or_backoff(
                ASSIGNED_POD_DELETE, assumed, None, lambda info: info.pod.uid != assumed.uid
            )
            return
        self.queue.done(info.pod)
        status = await run_pre_bind(profile, state, assumed, node)
        if status.is_success:
            # An interested binding extender binds instead of the Bind plugins (upstream's order).
            by_extender = await self.extenders.bind(assumed, node)
            if by_extender is not None:
                status = by_extender
            else:
                status = await run_bind(profile, state, assumed, node)
            if status.is_skip:
                status = Status.from_error(f"no bind plugin bound pod {assumed.key}")
        if not status.is_success:
            self._undo(attempt, assumed, node)
            # Capacity the pod held is free again: pods it may have blocked deserve a retry.
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None)
            self.handle_failure(attempt, Failure.at_chosen_node(status))
            return
        attempt.bound = True
        if self.result_annotations is not None:
            self.result_annotations.bound(assumed)
        self.errored.discard(assumed.key)
        self.cache.finish_binding(assumed)
        await self.recorder.pod_event_waiting(
            assumed,
            event_type="Normal",
            reason="Scheduled",
            action="Binding",
            note=f"Successfully assigned {assumed.key} to {node}",
            controller=profile.name,
        )
        now = time.perf_counter()
        self.metrics.schedule_attempt("scheduled", profile.name, now - attempt.started)
        first = info.initial_attempt_timestamp
        sli = self.clock.now() - first if first is not None else 0.0
        self.metrics.pod_scheduled(info.attempts, sli)
        log_v(_log, V_BIND, "Successfully bound pod to node", pod=assumed.key, node=node)
        await run_post_bind(profile, state, assumed, node)

    # ---- failures ------------------------------------------------------------------------

    def handle_failure(self, attempt: Attempt, failure: Failure) -> None:
        """Record the failure (Event, condition, metrics) and put the pod back in the queue."""
        profile, info = attempt.profile, attempt.info
        pod = info.pod
        rejected = failure.status.is_rejected
        _log_failure(pod, failure, rejected)
        result = "unschedulable" if rejected else "error"
        self.metrics.schedule_attempt(result, profile.name, time.perf_counter() - attempt.started)
        info.unschedulable_plugins = failure.unschedulable_plugins
        info.pending_plugins = failure.pending_plugins
        current = self.handlers.current_pod(pod.key)
        if current is not None and not current.node_name and current.uid == pod.uid:
            info.pod = current
            self.queue.add_unschedulable_if_not_present(info, attempt.cycle)
        self.queue.done(pod)
        nominated = ""
        if failure.post_filter is not None and failure.post_filter.nominated_node_name:
            nominated = failure.post_filter.nominated_node_name
            self.queue.add_nominated_pod(info.pod, nominated)
        elif pod.nominated_node_name and failure.clear_nomination:
            self.queue.delete_nominated_pod(pod)
        elif pod.nominated_node_name:
            nominated = pod.nominated_node_name
        self.recorder.pod_event(
            pod,
            event_type="Warning",
            reason="FailedScheduling",
            action="Scheduling",
            note=failure.message,
            controller=profile.name,
        )
        self._patch_condition(pod, failure, rejected, nominated)
        if self.result_annotations is not None:
            self.result_annotations.failed(pod, failure)
        self.last_failures[pod.key] = failure.message
        if rejected:
            self.errored.discard(pod.key)
        else:
            self.errored.add(pod.key)

    def _patch_condition(self, pod: Pod, failure: Failure, rejected: bool, nominated: str) -> None:
        patch = failure_status_patch(
            pod,
            message=failure.message,
            rejected=rejected,
            nominated=nominated,
            clear_nomination=failure.clear_nomination,
            now=self.clock.wall(),
        )
        if patch is None:
            return
        client = self.client

        async def send() -> None:
            await client.patch_pod_status(pod.namespace, pod.name, patch)

        self.dispatcher.submit(f"status of {pod.key}", send)

    def handle_reject_waiting(self, uid: str) -> None:
        waiting = self.waiting_pods.get(uid)
        if waiting is not None:
            for plugin in waiting.pending_plugins()[:1]:
                waiting.reject(plugin, "removed")

    # ---- fatal errors --------------------------------------------------------------------

    def on_fatal(self, listener: Callable[[BaseException], None]) -> None:
        """Call `listener` once the scheduler's own machinery has failed."""
        self._fatal_listeners.append(listener)

    def watch(self, task: asyncio.Task[None]) -> None:
        """Own `task`: an exception ending it is a fatal error, never left unretrieved."""
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.report_fatal(task.get_name(), exc)

    def report_fatal(self, where: str, exc: BaseException) -> None:
        """Log the failure with its traceback and tell the listeners (first failure wins)."""
        _log.error(
            "Scheduler failed; it must be restarted", where=where, err=raised(exc), exc_info=exc
        )
        if self.fatal_error is not None:
            return
        self.fatal_error = exc
        for listener in self._fatal_listeners:
            listener(exc)

    # ---- lifecycle -----------------------------------------------------------------------

    def is_idle(self) -> bool:
        """Nothing to do until the cluster or the clock moves on.

        Pods backing off after an Error count as settled: only a change in the plugin that
        failed could give them a different outcome.
        """
        counts = self.queue.pending_counts()
        backing_off = counts.get("backoff", 0)
        if backing_off:
            backing_off -= sum(1 for key in self.errored if self.queue.locate(key) == "backoff")
        return (
            counts.get("active", 0) == 0
            and backing_off == 0
            and not self.binding_tasks
            and not self.awaiting_extenders
            and self.api_writes_pending == 0
        )

    @property
    def api_writes_pending(self) -> int:
        """Events and status patches queued or in progress."""
        return self.dispatcher.pending + self.events.pending

    def start_api_writers(self) -> None:
        """Start the workers that write Events and pod status (idempotent)."""
        self.dispatcher.start()
        self.events.start()

    async def drain_api_writes(self) -> None:
        """Until every queued Event and status patch has been written or given up."""
        await self.dispatcher.drain()
        await self.events.drain()

    async def stop(self, *, event_deadline: float = 0.0) -> None:
        """Cancel binding cycles and background tasks; Events still queued get up to
        `event_deadline` seconds to be written."""
        self.queue.close()
        for task in [*self.binding_tasks, *self.background]:
            task.cancel()
        await asyncio.gather(*self.binding_tasks, *self.background, return_exceptions=True)
        await self.dispatcher.stop()
        await self.events.stop(event_deadline)
        await self.extenders.close()


def _names(profile: EffectiveProfile) -> set[str]:
    return {ref.name for refs in profile.plugins.values() for ref in refs}


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
