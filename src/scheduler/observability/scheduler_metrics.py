"""`SchedulerMetrics`: the typed face of every metric the scheduler records.

The core calls one method per fact ("a pod was scheduled after 3 attempts") and never touches
prometheus_client. All families live in a registry the caller injects (or one created per
instance), never in prometheus_client's global registry, so two schedulers in one process,
or two tests, never share counters.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import ClassVar
from typing import Generic
from typing import TypeVar

from prometheus_client import CollectorRegistry
from prometheus_client import Counter
from prometheus_client.metrics import MetricWrapperBase

from scheduler.observability import catalog
from scheduler.observability import component_catalog
from scheduler.observability.catalog import MetricSpec
from scheduler.observability.component_metrics import RestClientMetrics
from scheduler.observability.component_metrics import SecurePortMetrics
from scheduler.observability.component_metrics import register_process_and_build
from scheduler.observability.exposition import CONTENT_TYPE
from scheduler.observability.exposition import render_text
from scheduler.observability.families import new_counter as _counter
from scheduler.observability.families import new_gauge as _gauge
from scheduler.observability.families import new_histogram as _histogram
from scheduler.observability.label_values import attempts_label
from scheduler.observability.scraped_gauges import GaugeSource
from scheduler.observability.scraped_gauges import LabelledValues
from scheduler.observability.scraped_gauges import ScrapedGauges

_M = TypeVar("_M", bound=MetricWrapperBase)


class _Children(Generic[_M]):
    """Per-label-values children of one family, looked up without prometheus_client's lock.

    `labels()` validates, converts and locks on every call; hot paths record several
    observations per cycle, and the set of label combinations is small and fixed.
    """

    __slots__ = ("_children", "_family")

    def __init__(self, family: _M) -> None:
        self._family = family
        self._children: dict[tuple[str, ...], _M] = {}

    def __call__(self, *label_values: str) -> _M:
        child = self._children.get(label_values)
        if child is None:
            child = self._children[label_values] = self._family.labels(*label_values)
        return child

    def forget(self) -> None:
        """Drop the remembered children, whose family has been cleared: a child kept here
        would go on counting where no scrape sees it."""
        self._children.clear()


# Counts by the value of a family's one label, read at scrape time.
CountsByLabel = Callable[[], Mapping[str, int]]


def _by_one_label(source: CountsByLabel) -> GaugeSource:
    def read() -> LabelledValues:
        return [((label,), value) for label, value in source().items()]

    return read


def _by_label_pair(source: Callable[[], Mapping[tuple[str, str], int]]) -> GaugeSource:
    def read() -> LabelledValues:
        return source().items()

    return read


class SchedulerMetrics:
    """Records the scheduler's metrics under kube-scheduler's names, labels and buckets."""

    CONTENT_TYPE: ClassVar[str] = CONTENT_TYPE
    """The media type of `render()`'s output."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry

        self._schedule_attempts = _Children(_counter(catalog.SCHEDULE_ATTEMPTS, r))
        self._attempt_duration = _Children(_histogram(catalog.SCHEDULING_ATTEMPT_DURATION, r))
        self._algorithm_duration = _histogram(catalog.SCHEDULING_ALGORITHM_DURATION, r)
        self._extension_point_duration = _Children(
            _histogram(catalog.FRAMEWORK_EXTENSION_POINT_DURATION, r)
        )
        self._plugin_duration = _Children(_histogram(catalog.PLUGIN_EXECUTION_DURATION, r))
        self._plugin_evaluation = _Children(_counter(catalog.PLUGIN_EVALUATION, r))
        self._pod_attempts = _histogram(catalog.POD_SCHEDULING_ATTEMPTS, r)
        self._pod_sli_duration = _Children(_histogram(catalog.POD_SCHEDULING_SLI_DURATION, r))
        self._permit_wait = _Children(_histogram(catalog.PERMIT_WAIT_DURATION, r))
        self._queue_incoming = _Children(_counter(catalog.QUEUE_INCOMING_PODS, r))
        self._preemption_attempts = _counter(catalog.PREEMPTION_ATTEMPTS, r)
        self._preemption_victims = _histogram(catalog.PREEMPTION_VICTIMS, r)
        self._preemption_tasks = _Children(_counter(catalog.PREEMPTION_GOROUTINES_EXECUTION, r))
        self._preemption_task_duration = _Children(
            _histogram(catalog.PREEMPTION_GOROUTINES_DURATION, r)
        )
        self._event_handling = _Children(_histogram(catalog.EVENT_HANDLING_DURATION, r))
        self._hint_duration = _Children(_histogram(catalog.QUEUEING_HINT_EXECUTION_DURATION, r))
        self._goroutines = _Children(_gauge(catalog.GOROUTINES, r))
        self._volume_cache_requests = _Children(_counter(catalog.VOLUME_BINDER_CACHE_REQUESTS, r))
        self._volume_stage_errors = _Children(_counter(catalog.VOLUME_SCHEDULING_STAGE_ERROR, r))
        self._binding_allocations = _Children(
            _counter(catalog.DRA_BINDING_CONDITIONS_ALLOCATIONS, r)
        )
        self._binding_wait = _Children(_histogram(catalog.DRA_BINDING_CONDITIONS_WAIT, r))
        self._claim_creates = _Children(_counter(catalog.RESOURCE_CLAIM_CREATES, r))
        self._scheduled_after_flush = _counter(catalog.POD_SCHEDULED_AFTER_FLUSH, r)
        self._batch_attempts = _Children(_counter(catalog.BATCH_ATTEMPTS, r))
        self._batch_flushes = _Children(_counter(catalog.BATCH_CACHE_FLUSHED, r))
        self._node_hint_duration = _Children(_histogram(catalog.GET_NODE_HINT_DURATION, r))
        self._store_results_duration = _Children(
            _histogram(catalog.STORE_SCHEDULE_RESULTS_DURATION, r)
        )
        self._leader = _Children(_gauge(catalog.LEADER_ELECTION_MASTER_STATUS, r))
        self._leader_slowpath = _Children(_counter(catalog.LEADER_ELECTION_SLOWPATH, r))
        self._events_dropped = _Children(_counter(catalog.EVENTS_DROPPED, r))
        self._feature_enabled = _gauge(component_catalog.FEATURE_ENABLED, r)

        self._scraped = ScrapedGauges(spec for spec in catalog.ALL if spec.scraped)
        self._plugin_sources: list[Callable[[], Mapping[str, LabelledValues]]] = []
        r.register(self._scraped)
        self.rest_client = RestClientMetrics(r)
        """What the API clients report each request to."""
        self.secure_port = SecurePortMetrics(r)
        """What the secure port reports each caller's authentication and authorization to."""
        register_process_and_build(r)

    # -- scheduling cycle ----------------------------------------------------------------

    def schedule_attempt(self, result: str, profile: str, duration: float) -> None:
        """One attempt ended as `result` (scheduled / unschedulable / error) after `duration` s."""
        self._schedule_attempts(result, profile).inc()
        self._attempt_duration(result, profile).observe(duration)

    def scheduling_algorithm_duration(self, seconds: float) -> None:
        self._algorithm_duration.observe(seconds)

    def extension_point_duration(
        self, extension_point: str, status: str, profile: str, seconds: float
    ) -> None:
        """All plugins of one extension point together; `status` is the Code's label."""
        self._extension_point_duration(extension_point, status, profile).observe(seconds)

    def plugin_execution_duration(
        self, plugin: str, extension_point: str, status: str, seconds: float, calls: int = 1
    ) -> None:
        """One plugin at one extension point; call it only in cycles the sampler picked.

        `calls` > 1: `seconds` covered that many per-node calls at once (a vectorized Filter
        or Score). Upstream observes each node's call, so the family's count and sum are kept
        as those calls would make them, each taking an equal share."""
        child = self._plugin_duration(plugin, extension_point, status)
        if calls == 1:
            child.observe(seconds)
        elif calls > 1:
            child.observe_repeated(seconds / calls, calls)

    def plugin_evaluation(
        self, plugin: str, extension_point: str, profile: str, count: int = 1
    ) -> None:
        """`count` runs of a plugin (a batch Filter over n nodes counts n, as per-node would)."""
        self._plugin_evaluation(plugin, extension_point, profile).inc(count)

    def plugin_evaluation_counter(
        self, plugin: str, extension_point: str, profile: str
    ) -> Callable[[int], None]:
        """What `plugin_evaluation` adds to for these labels, for callers that keep it (the
        runtime counts some twenty-five plugin runs per cycle)."""
        return self._plugin_evaluation(plugin, extension_point, profile).inc

    def pod_scheduled(self, attempts: int, sli_seconds: float) -> None:
        """A pod was bound after `attempts` attempts, `sli_seconds` after it first queued."""
        self._pod_attempts.observe(attempts)
        self._pod_sli_duration(attempts_label(attempts)).observe(sli_seconds)

    def permit_wait(self, result: str, seconds: float) -> None:
        self._permit_wait(result).observe(seconds)

    def pod_scheduled_after_flush(self) -> None:
        """A pod the unschedulable pool's periodic flush had moved out was bound."""
        self._scheduled_after_flush.inc()

    def feature_gates(self, states: Iterable[tuple[str, str, bool]]) -> None:
        """`kubernetes_feature_enabled`: each gate's name, stage label and whether it is on."""
        for name, stage, enabled in states:
            self._feature_enabled.labels(name, stage).set(1 if enabled else 0)

    # -- opportunistic batching ----------------------------------------------------------

    def batch_attempt(self, profile: str, result: str) -> None:
        self._batch_attempts(profile, result).inc()

    def batch_cache_flushed(self, profile: str, reason: str) -> None:
        self._batch_flushes(profile, reason).inc()

    def node_hint_duration(self, hinted: bool, profile: str, seconds: float) -> None:
        self._node_hint_duration("hint" if hinted else "no_hint", profile).observe(seconds)

    def store_schedule_results_duration(self, profile: str, seconds: float) -> None:
        self._store_results_duration(profile).observe(seconds)

    # -- queue and events ----------------------------------------------------------------

    def queue_incoming(self, queue: str, event: str) -> None:
        """A pod entered `queue` (active / backoff / unschedulable) because of `event`; a gated
        pod enters the unschedulable pool, as upstream counts it."""
        self._queue_incoming(queue, event).inc()

    pod_incoming = queue_incoming
    """The queue observer's name for `queue_incoming`, so this object can be the observer."""

    def event_handling_duration(self, event: str, seconds: float) -> None:
        self._event_handling(event).observe(seconds)

    def queueing_hint_duration(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        """`hint` is Queue, QueueSkip or Error."""
        self._hint_duration(plugin, event, hint).observe(seconds)

    # -- preemption ----------------------------------------------------------------------

    def preemption_attempt(self) -> None:
        self._preemption_attempts.inc()

    def preemption_victims(self, victims: int) -> None:
        self._preemption_victims.observe(victims)

    def preemption_goroutine(self, result: str, seconds: float) -> None:
        """The asynchronous part of a preemption (victim deletion) ended as `result`."""
        self._preemption_tasks(result).inc()
        self._preemption_task_duration(result).observe(seconds)

    # -- concurrency, API calls, leadership ----------------------------------------------

    def goroutines(self, operation: str, delta: int) -> None:
        """`delta` concurrent tasks doing `operation` started (positive) or ended (negative)."""
        self._goroutines(operation).inc(delta)

    def leader_status(self, name: str, is_leader: bool) -> None:
        """Whether this process holds the lease `name` (the lease's name, e.g. kube-scheduler)."""
        self._leader(name).set(1 if is_leader else 0)

    def leader_slowpath(self, name: str) -> None:
        """A leader's renewal of `name` read the lease first (its optimistic write failed)."""
        self._leader_slowpath(name).inc()

    def event_dropped(self, reason: str) -> None:
        self._events_dropped(reason).inc()

    def volume_binder_cache_request(self, operation: str) -> None:
        self._volume_cache_requests(operation).inc()

    def volume_scheduling_stage_error(self, operation: str) -> None:
        self._volume_stage_errors(operation).inc()

    def dra_binding_conditions_wait(
        self, profile: str, driver: str, status: str, seconds: float
    ) -> None:
        self._binding_wait(profile, driver, status).observe(seconds)

    def dra_binding_conditions_allocation(self, profile: str, driver: str, status: str) -> None:
        self._binding_allocations(profile, driver, status).inc()

    def resource_claim_create(self, status: str) -> None:
        self._claim_creates(status).inc()

    # -- gauges read at scrape time ------------------------------------------------------

    def set_cache_size_source(self, source: CountsByLabel | None) -> None:
        """Counts by type: nodes, pods, assumed_pods."""
        self._set_counts_source(catalog.CACHE_SIZE, source)

    def set_pending_pods_source(self, source: CountsByLabel | None) -> None:
        """Counts by queue: active, backoff, unschedulable, gated."""
        self._set_counts_source(catalog.PENDING_PODS, source)

    def set_unschedulable_pods_source(
        self, source: Callable[[], Mapping[tuple[str, str], int]] | None
    ) -> None:
        """Counts by (plugin, profile) of the plugins that rejected unschedulable pods."""
        self._scraped.set_source(
            catalog.UNSCHEDULABLE_PODS.name, None if source is None else _by_label_pair(source)
        )

    def set_unserved_pods_source(self, source: CountsByLabel | None) -> None:
        """Counts by schedulerName of unassigned pods that no running scheduler serves."""
        self._set_counts_source(catalog.UNSERVED_PODS, source)

    def set_inflight_events_source(self, source: CountsByLabel | None) -> None:
        """Counts by event label of the events the queue keeps for in-flight pods."""
        self._set_counts_source(catalog.INFLIGHT_EVENTS, source)

    def _set_counts_source(self, spec: MetricSpec, source: CountsByLabel | None) -> None:
        """`spec`'s samples are read from `source` at scrape time; None stops reading them."""
        self._scraped.set_source(spec.name, None if source is None else _by_one_label(source))

    def add_plugin_samples_source(self, source: Callable[[], Mapping[str, LabelledValues]]) -> None:
        """A plugin's samples, by family name, for the families in `catalog.PLUGIN_REPORTED`
        (several plugins, or one per profile, may report into the same family)."""
        self._plugin_sources.append(source)
        for spec in catalog.PLUGIN_REPORTED:
            self._scraped.set_source(spec.name, self._plugin_family(spec.name))

    def _plugin_family(self, name: str) -> GaugeSource:
        def samples() -> LabelledValues:
            return [sample for source in self._plugin_sources for sample in source().get(name, ())]

        return samples

    # -- exposition ----------------------------------------------------------------------

    def render(self) -> bytes:
        """The registry in Prometheus text format (media type `CONTENT_TYPE`)."""
        return render_text(self.registry)

    def reset(self) -> None:
        """`DELETE /metrics`, as kube-scheduler's registry resets: every family with labels
        loses its series (they come back at their next observation) and a counter without
        labels starts again from 0; gauges and histograms without labels, and families read
        when scraped, keep their values."""
        # prometheus_client has no public way to list a registry's collectors.
        for collector in list(self.registry._collector_to_names):
            if not isinstance(collector, MetricWrapperBase):
                continue
            if collector._labelnames:
                collector.clear()
            elif isinstance(collector, Counter):
                collector.reset()
        for value in vars(self).values():
            if isinstance(value, _Children):
                value.forget()
