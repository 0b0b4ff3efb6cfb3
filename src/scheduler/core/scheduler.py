"""The scheduler: informer events in, one pod at a time through the cycle, bindings out."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.backend.cache import SchedulerCache
from scheduler.backend.queue import DEFAULT_MAX_IN_UNSCHEDULABLE
from scheduler.backend.queue import SchedulingQueue
from scheduler.backend.queue import run_queue_flushes
from scheduler.cluster.informer import Informer
from scheduler.cluster.port import ClusterClient
from scheduler.config import EffectiveProfile
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config.feature_gates import FeatureGates
from scheduler.core.api_dispatcher import ApiDispatcher
from scheduler.core.binding_cycle import BindingCycles
from scheduler.core.cache_debugger import CacheDebugger
from scheduler.core.event_recorder import EventRecorder
from scheduler.core.event_sink import EventSink
from scheduler.core.extender_placement import find_placement_with_extenders
from scheduler.core.failure import FailureHandler
from scheduler.core.fencing import FencedClusterAPI
from scheduler.core.fencing import Tenure
from scheduler.core.handle_impl import LeaderWork
from scheduler.core.handle_impl import SchedulerHandle
from scheduler.core.outcome import Attempt
from scheduler.core.outcome import Failure
from scheduler.core.outcome import Placement
from scheduler.core.pod_events import PodEventHandlers
from scheduler.core.result_annotation import ResultAnnotations
from scheduler.core.scheduling_cycle import SchedulingCycle
from scheduler.core.services import CycleServices
from scheduler.framework.clock import Clock
from scheduler.framework.handle import Lister
from scheduler.framework.plugins import MetricsReporter
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.spec import PluginSpec
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.framework.status import raised
from scheduler.objects.pod import Pod
from scheduler.observability import PluginMetricsSampler
from scheduler.observability import SchedulerMetrics
from scheduler.observability import get_logger
from scheduler.runtime.extenders import ExtenderChain
from scheduler.runtime.filtering import FilterRun
from scheduler.runtime.framework import Framework
from scheduler.runtime.invoke import guarded_less
from scheduler.runtime.invoke import guarded_sort_key
from scheduler.runtime.pods_in_pre_bind import PodsInPreBind
from scheduler.runtime.waiting_pods import WaitingPods

_log = get_logger("scheduler")


# Informers the core always runs; plugins add their own through PluginSpec.watches.
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass(frozen=True, slots=True)
class SchedulerSetup:
    """What every scheduler is built from: the configuration, its profiles, the plugins they
    name, the cluster it reads and writes, and the clock it runs on."""

    config: KubeSchedulerConfiguration
    profiles: Sequence[EffectiveProfile]
    registry: Mapping[str, PluginSpec]
    client: ClusterClient
    clock: Clock


class Scheduler:
    def __init__(
        self,
        setup: SchedulerSetup,
        *,
        rng: random.Random | None = None,
        metrics: SchedulerMetrics | None = None,
        instance: str = "0",
        vectorize: bool = True,
        max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE,
        events_client: ClusterClient | None = None,
        tenure: Tenure | None = None,
        features: FeatureGates | None = None,
    ) -> None:
        """`events_client` writes Events (its own rate budget; the setup's client by default);
        with a `tenure` (the leader elector), Bindings and other placement writes are fenced by
        it. `features` are the feature gates in force (kube-scheduler v1.36's defaults if not
        given)."""
        config, profiles, registry = setup.config, setup.profiles, setup.registry
        client, clock = setup.client, setup.clock
        self.config = config
        self.client = client
        self.clock = clock
        self.rng = rng or random.Random()
        self.metrics = metrics or SchedulerMetrics()
        self.cache = SchedulerCache()
        self.waiting_pods = WaitingPods()
        self.pods_in_pre_bind = PodsInPreBind()
        self.dispatcher = ApiDispatcher()
        self.events = EventSink(events_client or client, clock, metrics=self.metrics)
        writes = FencedClusterAPI(client, tenure, clock) if tenure is not None else None
        self.background: set[asyncio.Task[None]] = set()
        # The plugins' background tasks that end by themselves (a subset of `background`).
        self.one_off_work: set[asyncio.Task[None]] = set()
        # Plugins' work for the replica that schedules, started with the scheduling loop.
        self.leader_work = LeaderWork()
        filter_run = FilterRun()
        self.extenders = ExtenderChain(config.extenders, goroutines=self.metrics.goroutines)
        self.extenders.log_settings()
        # True while an attempt awaits extenders: the popped pod is neither queued nor binding.
        self.awaiting_extenders = False
        # Plugin timings are recorded for a sample of cycles, as upstream does (10 %).
        self.sampler = PluginMetricsSampler(self.rng)
        features = features or FeatureGates()
        specs = [registry[ref] for p in profiles for ref in _names(p)]
        watches = sorted({w for spec in specs for w in spec.watched_resources(features.enabled)})
        self.informers: dict[str, Informer] = {}
        self._informer_tasks: list[asyncio.Task[None]] = []
        self._scheduling_tasks: list[asyncio.Task[None]] = []
        self._extra_resources = watches
        listers: dict[str, Lister] = {}
        self.profiles: dict[str, Framework] = {}
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
                pods_in_pre_bind=self.pods_in_pre_bind,
                tasks=self.background,
                one_off=self.one_off_work,
                leader_work=self.leader_work,
                plugin_metrics=self.metrics,
                api=writes,
                extenders=self.extenders,
                features=features,
            )
            handles.append(handle)
            self.profiles[effective.scheduler_name] = Framework(
                effective,
                registry,
                handle,
                self.waiting_pods,
                self.metrics,
                vectorize=vectorize,
                filter_run=filter_run,
                batching=features.enabled("OpportunisticBatching"),
                extenders=bool(config.extenders),
                extenders_choose=any(e.filter_verb or e.prioritize_verb for e in config.extenders),
            )
        first = next(iter(self.profiles.values()))
        if first.queue_sort is None:
            raise ValueError("no queue sort plugin is enabled")
        sort_key = getattr(first.queue_sort, "sort_key", None)
        self.queue = SchedulingQueue(
            less=guarded_less(first.queue_sort.name, first.queue_sort.less),
            rank=guarded_sort_key(first.queue_sort.name, sort_key) if callable(sort_key) else None,
            clock=clock,
            pre_enqueue=self._pre_enqueue,
            hints={
                name: p.queueing_hints(extenders=bool(config.extenders))
                for name, p in self.profiles.items()
            },
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
        self.handlers = PodEventHandlers(
            self.cache, self.queue, self.metrics, self.responsible_for, self.handle_reject_waiting
        )
        self._listers = listers
        self.metrics.set_pending_pods_source(self.queue.pending_counts)
        self.metrics.set_inflight_events_source(self.queue.in_flight_event_counts)
        self.metrics.set_unschedulable_pods_source(self.queue.unschedulable_plugin_counts)
        self.metrics.set_cache_size_source(self.cache.sizes)
        for profile in self.profiles.values():
            for plugin in profile.plugins.values():
                if isinstance(plugin, MetricsReporter):
                    self.metrics.add_plugin_samples_source(plugin.metric_samples)
        services = CycleServices(self.cache, self.queue, self.recorder, self.metrics, clock)
        self.failures = FailureHandler(
            services,
            dispatcher=self.dispatcher,
            client=client,
            current_pod=self._current_pod,
        )
        # The latest failure message per pod key, for reports and `explain`.
        self.last_failures = self.failures.last_failures
        # Pods whose latest attempt failed with Error rather than being rejected.
        self.errored = self.failures.errored
        self.bindings = BindingCycles(
            services,
            failures=self.failures,
            bind_by_extender=self.extenders.bind,
            watch=self.watch,
            client=client,
            pods_in_pre_bind=self.pods_in_pre_bind,
        )
        # Binding cycles in flight.
        self.binding_tasks = self.bindings.tasks
        self.cycle = SchedulingCycle(
            services,
            frameworks=self.profiles,
            sampler=self.sampler,
            failures=self.failures,
            bindings=self.bindings,
        )
        # Set when the scheduler's own machinery failed; it must not go on holding pods.
        self.fatal_error: BaseException | None = None
        self._fatal_listeners: list[Callable[[BaseException], None]] = []

    @property
    def result_annotations(self) -> ResultAnnotations | None:
        """Set to record each failure's plugin results on the pod (opt-in, see the module)."""
        return self.failures.result_annotations

    @result_annotations.setter
    def result_annotations(self, annotations: ResultAnnotations | None) -> None:
        self.failures.result_annotations = annotations

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

    def cache_debugger(self) -> CacheDebugger | None:
        """The comparer and dumper of SIGUSR2 over this scheduler's cache, queue and
        informers; None until `start` has made the informers."""
        if "nodes" not in self.informers or "pods" not in self.informers:
            return None
        return CacheDebugger(
            cache=self.cache,
            queue=self.queue,
            nodes=self.informers["nodes"].store,
            pods=self.informers["pods"].store,
            scheduler_names=self.profiles,
        )

    # ---- the loop ----------------------------------------------------------------------

    def _pre_enqueue(self, pod: Pod, gating_plugin: str) -> Status:
        profile = self.profiles.get(pod.scheduler_name)
        if profile is None:
            return Status()
        timed = self.sampler.sample_pre_enqueue()
        status = profile.run_pre_enqueue(pod, gating_plugin, timed=timed)
        if status.code is Code.ERROR:
            # Held at the gate by a failing plugin: reported like any other Error.
            self.last_failures[pod.key] = status.message()
            self.errored.add(pod.key)
        return status

    def _current_pod(self, key: str) -> Pod | None:
        # Through `handlers` at each call: a daemon may swap them before the informers start.
        return self.handlers.current_pod(key)

    def responsible_for(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    async def run(self) -> None:
        """Pop and schedule until cancelled (only the leader calls this)."""
        self.start_api_writers()
        while True:
            # While the API is what limits the rate, pods wait here in the queue, not in
            # binding cycles that only hold memory (see MAX_BINDING_CYCLES).
            await self.bindings.wait_for_room()
            info = await self.queue.pop_wait()
            await self.schedule_next(info)
            await asyncio.sleep(0)

    async def schedule_next(self, info: QueuedPodInfo) -> None:
        """One scheduling cycle, awaited only when an HTTP extender is interested in the pod:
        the informers' handlers wait meanwhile, so the cache stands still as in `schedule_one`."""
        if not self.extenders.interested_in(info.pod):
            self.schedule_one(info)
            return
        for informer in self.informers.values():
            informer.hold()
        self.awaiting_extenders = True
        try:
            await self.cycle.run_awaiting(info, self._place_with_extenders)
        finally:
            self.awaiting_extenders = False
            for informer in self.informers.values():
                informer.release()

    async def _place_with_extenders(self, attempt: Attempt) -> Placement | Failure:
        return await find_placement_with_extenders(
            attempt.framework,
            attempt.state,
            attempt.info.pod,
            self.cache.table,
            self.queue.nominated_pods_by_node(),
            self.extenders,
            attempt.batch,
        )

    def schedule_one(self, info: QueuedPodInfo) -> None:
        """One scheduling cycle (`scheduling_cycle.py`); starts the binding cycle as a task if
        a node was chosen."""
        self.cycle.run(info)

    def handle_reject_waiting(self, uid: str) -> bool:
        """Reject the pod held at Permit under `uid`; False if none is (any more)."""
        return self.waiting_pods.reject_removed(uid)

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
        """Nothing to do until the cluster or the clock moves on: no pod active or binding, no
        API write and no plugin's one-off work (a preemption's deletions) under way.

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
            and not self.one_off_work
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

    # ---- the tasks the scheduler owns ----------------------------------------------------
    #
    # `start` runs what every replica runs (API writers, informers); `start_scheduling` what
    # only the leader runs (the queue's flush loop, the scheduling loop, the plugins' leader
    # work); `stop` ends them all, with the binding cycles and the plugins' background tasks.

    async def start(self, *, pods_last: bool = False) -> None:
        """Start the Event and status writers and one informer per watched resource.

        With `pods_last` the pod informer starts once the others have listed, so pods meet
        the nodes, claims and volumes they refer to instead of bouncing off PreEnqueue until
        those arrive (`simulate` loads a whole scenario at once)."""
        self.start_api_writers()
        informers = self.build_informers()
        for informer in sorted(informers, key=lambda i: i.resource == "pods"):
            if pods_last and informer.resource == "pods":
                others = [i.synced.wait() for i in informers if i.resource != "pods"]
                await asyncio.gather(*others)
            self._own(informer.run(), f"informer:{informer.name}", self._informer_tasks)

    async def wait_synced(self) -> None:
        """Until every informer has listed once."""
        await asyncio.gather(*(i.synced.wait() for i in self.informers.values()))

    def start_scheduling(self, *, leading_since: float | None = None) -> None:
        """Start the queue's flush loop and the scheduling loop (idempotent).

        Once every informer has listed, the plugins' leader work starts and the loop pops.
        `leading_since` is when this replica took the Lease: a new leader first lists the pods
        again unless its pod informer's last list was sent after that moment, since the watch
        may lag behind Bindings the previous leader made just before it went, and a list sent
        after taking the Lease cannot. The leader work starts after that list too."""
        if self._scheduling_tasks:
            return
        self._own(self._schedule_when_synced(leading_since), "scheduling-loop")
        self._own(run_queue_flushes(self.queue, self.clock), "queue-flushes")

    def cancel_scheduling(self) -> None:
        """Stop popping at once (leadership lost), and the plugins' leader work with it;
        binding cycles are left to the caller."""
        for task in self._scheduling_tasks:
            task.cancel()
        self.leader_work.cancel()

    def start_leader_work(self) -> None:
        """Start what plugins keep for the replica that schedules (`Handle.start_when_leading`:
        status writers, reconciles). The scheduling loop does it once the informers have
        listed; whoever drives cycles by hand instead (a test) does it itself."""
        self.leader_work.start()

    async def stop_scheduling(self) -> None:
        """Stop popping and wait until the loop has ended."""
        self.cancel_scheduling()
        await asyncio.gather(*self._scheduling_tasks, return_exceptions=True)

    async def stop(self, *, event_deadline: float = 0.0) -> None:
        """Cancel every task the scheduler owns: the loops, binding cycles, plugins' background
        tasks and informers. Events still queued get up to `event_deadline` seconds."""
        self.queue.close()
        tasks = [
            *self._scheduling_tasks,
            *self.binding_tasks,
            *self.background,
            *self._informer_tasks,
        ]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.dispatcher.stop()
        await self.events.stop(event_deadline)
        await self.extenders.close()

    async def _schedule_when_synced(self, leading_since: float | None) -> None:
        await self.wait_synced()
        pods = self.informers.get("pods")
        if pods is not None and leading_since is not None:
            listed = pods.last_list_started
            if listed is None or listed < leading_since:
                await pods.relist()
        # Before the first pop, not with some pod's cycle: leader work (status, reconciles)
        # must run with no pod pending too, and read caches that hold what the previous
        # leader did.
        self.start_leader_work()
        await self.run()

    def _own(
        self,
        work: Coroutine[Any, Any, None],
        name: str,
        tasks: list[asyncio.Task[None]] | None = None,
    ) -> None:
        task = asyncio.create_task(work, name=name)
        (self._scheduling_tasks if tasks is None else tasks).append(task)
        self.watch(task)


def _names(profile: EffectiveProfile) -> set[str]:
    return {ref.name for refs in profile.plugins.values() for ref in refs}
