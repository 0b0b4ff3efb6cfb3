"""Every metric family the scheduler exposes: upstream names, types, labels and buckets.

One declarative table, so the names a dashboard depends on are reviewable in one place and
`SchedulerMetrics` is only wiring. Families marked `scraped` are gauges whose values are read
from a callback when Prometheus scrapes, instead of being pushed on every change.

Deliberate differences from older upstream releases:
- the cache gauge is `scheduler_cache_size`; `scheduler_scheduler_cache_size` was deprecated
  and then removed in v1.34, so a v1.36-compatible scheduler must not expose it;
- `scheduler_pod_scheduling_duration_seconds` is left out: deprecated in v1.29 and hidden since.

HELP texts start with the stability level in brackets, as kube-scheduler's do.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from scheduler.observability.buckets import exponential_buckets


class Kind(StrEnum):
    COUNTER = "counter"
    GAUGE = "gauge"
    HISTOGRAM = "histogram"


class Stability(StrEnum):
    ALPHA = "ALPHA"
    BETA = "BETA"
    STABLE = "STABLE"


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One metric family as it appears on /metrics (counter names include `_total`)."""

    name: str
    kind: Kind
    description: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()
    stability: Stability = Stability.ALPHA
    scraped: bool = False

    @property
    def help(self) -> str:
        return f"[{self.stability}] {self.description}"


def _counter(
    name: str, description: str, *labels: str, stability: Stability = Stability.ALPHA
) -> MetricSpec:
    return MetricSpec(name, Kind.COUNTER, description, labels, stability=stability)


def _gauge(
    name: str,
    description: str,
    *labels: str,
    stability: Stability = Stability.ALPHA,
    scraped: bool = False,
) -> MetricSpec:
    return MetricSpec(name, Kind.GAUGE, description, labels, stability=stability, scraped=scraped)


def _histogram(
    name: str,
    description: str,
    buckets: tuple[float, ...],
    *labels: str,
    stability: Stability = Stability.ALPHA,
) -> MetricSpec:
    return MetricSpec(name, Kind.HISTOGRAM, description, labels, buckets, stability)


# Bucket layouts shared by several families.
_ATTEMPT_SECONDS = exponential_buckets(0.001, 2, 15)  # 1ms .. ~16s
_EXTENSION_POINT_SECONDS = exponential_buckets(0.0001, 2, 12)  # 0.1ms .. ~200ms
_PLUGIN_SECONDS = exponential_buckets(0.00001, 1.5, 20)  # 10us .. ~22ms, fine-grained
_E2E_SECONDS = exponential_buckets(0.01, 2, 20)  # 10ms .. ~88min

SCHEDULE_ATTEMPTS = _counter(
    "scheduler_schedule_attempts_total",
    "Scheduling attempts by outcome: 'unschedulable' means no node fits the pod, "
    "'error' means the scheduler itself failed.",
    "result",
    "profile",
    stability=Stability.STABLE,
)
SCHEDULING_ATTEMPT_DURATION = _histogram(
    "scheduler_scheduling_attempt_duration_seconds",
    "Seconds one scheduling attempt took, from popping the pod to the end of binding.",
    _ATTEMPT_SECONDS,
    "result",
    "profile",
    stability=Stability.STABLE,
)
SCHEDULING_ALGORITHM_DURATION = _histogram(
    "scheduler_scheduling_algorithm_duration_seconds",
    "Seconds spent choosing a node for a pod (filtering and scoring).",
    _ATTEMPT_SECONDS,
)
PENDING_PODS = _gauge(
    "scheduler_pending_pods",
    "Pods waiting to be scheduled, by queue: 'active' are ready to be tried, 'backoff' wait "
    "out a backoff, 'unschedulable' failed and wait for a cluster change, 'gated' carry "
    "scheduling gates and were never tried.",
    "queue",
    stability=Stability.STABLE,
    scraped=True,
)
QUEUE_INCOMING_PODS = _counter(
    "scheduler_queue_incoming_pods_total",
    "Pods moved into a scheduling queue, by the queue and the event that moved them.",
    "queue",
    "event",
    stability=Stability.STABLE,
)
PREEMPTION_ATTEMPTS = _counter(
    "scheduler_preemption_attempts_total",
    "Preemption attempts since the scheduler started.",
    stability=Stability.STABLE,
)
PREEMPTION_VICTIMS = _histogram(
    "scheduler_preemption_victims",
    "Victims chosen by one preemption on behalf of one pod.",
    exponential_buckets(1, 2, 7),  # more than 64 victims is rare enough for one bucket
    stability=Stability.STABLE,
)
POD_SCHEDULING_ATTEMPTS = _histogram(
    "scheduler_pod_scheduling_attempts",
    "Attempts a pod needed before it was scheduled.",
    exponential_buckets(1, 2, 5),
    stability=Stability.STABLE,
)
POD_SCHEDULING_SLI_DURATION = _histogram(
    "scheduler_pod_scheduling_sli_duration_seconds",
    "Seconds from a pod's first entry into the active queue until it was bound, across all "
    "of its attempts; time spent gated is not counted.",
    _E2E_SECONDS,
    "attempts",
    stability=Stability.BETA,
)
FRAMEWORK_EXTENSION_POINT_DURATION = _histogram(
    "scheduler_framework_extension_point_duration_seconds",
    "Seconds taken by all plugins of one extension point together.",
    _EXTENSION_POINT_SECONDS,
    "extension_point",
    "status",
    "profile",
    stability=Stability.STABLE,
)
PLUGIN_EXECUTION_DURATION = _histogram(
    "scheduler_plugin_execution_duration_seconds",
    "Seconds one plugin took at one extension point (recorded for a sample of cycles).",
    _PLUGIN_SECONDS,
    "plugin",
    "extension_point",
    "status",
)
PLUGIN_EVALUATION = _counter(
    "scheduler_plugin_evaluation_total",
    "Times each plugin ran at PreFilter, Filter, PreScore or Score.",
    "plugin",
    "extension_point",
    "profile",
    stability=Stability.BETA,
)
UNSCHEDULABLE_PODS = _gauge(
    "scheduler_unschedulable_pods",
    "Unschedulable pods by the plugin that rejected them; a pod rejected by several plugins "
    "counts once for each, so only per-plugin values are meaningful.",
    "plugin",
    "profile",
    scraped=True,
    stability=Stability.BETA,
)
GOROUTINES = _gauge(
    "scheduler_goroutines",
    "Concurrent tasks running, by the work they do (for example binding).",
    "operation",
    stability=Stability.BETA,
)
PERMIT_WAIT_DURATION = _histogram(
    "scheduler_permit_wait_duration_seconds",
    "Seconds a pod waited for Permit plugins to allow it.",
    _ATTEMPT_SECONDS,
    "result",
    stability=Stability.BETA,
)
CACHE_SIZE = _gauge(
    "scheduler_cache_size",
    "Nodes, pods and assumed pods held in the scheduler cache.",
    "type",
    scraped=True,
)
EVENT_HANDLING_DURATION = _histogram(
    "scheduler_event_handling_duration_seconds",
    "Seconds spent handling one cluster event.",
    _EXTENSION_POINT_SECONDS,
    "event",
)
QUEUEING_HINT_EXECUTION_DURATION = _histogram(
    "scheduler_queueing_hint_execution_duration_seconds",
    "Seconds one plugin's queueing hint function took for one event.",
    _PLUGIN_SECONDS,
    "plugin",
    "event",
    "hint",
)
INFLIGHT_EVENTS = _gauge(
    "scheduler_inflight_events",
    "Cluster events the scheduling queue currently remembers for pods being scheduled.",
    "event",
    scraped=True,
)
PREEMPTION_GOROUTINES_DURATION = _histogram(
    "scheduler_preemption_goroutines_duration_seconds",
    "Seconds the asynchronous part of a preemption took.",
    _E2E_SECONDS,
    "result",
)
PREEMPTION_GOROUTINES_EXECUTION = _counter(
    "scheduler_preemption_goroutines_execution_total",
    "Asynchronous preemption tasks run, by outcome.",
    "result",
)
VOLUME_BINDER_CACHE_REQUESTS = _counter(
    "scheduler_volume_binder_cache_requests_total",
    "Lookups in the volume binder's assume cache, by operation.",
    "operation",
)
VOLUME_SCHEDULING_STAGE_ERROR = _counter(
    "scheduler_volume_scheduling_stage_error_total",
    "Errors while scheduling volumes, by stage.",
    "operation",
)
DRA_BINDING_CONDITIONS_ALLOCATIONS = _counter(
    "scheduler_dra_bindingconditions_allocations_total",
    "Allocations of devices with binding conditions, per driver and per scheduling attempt, "
    "by how the wait for the conditions ended.",
    "profile",
    "driver",
    "status",
)
DRA_BINDING_CONDITIONS_WAIT = _histogram(
    "scheduler_dra_bindingconditions_wait_duration_seconds",
    "Seconds PreBind waited for the binding conditions of devices to be met.",
    exponential_buckets(0.1, 2, 14),
    "profile",
    "driver",
    "status",
)
RESOURCE_CLAIM_CREATES = _counter(
    "scheduler_resourceclaim_creates_total",
    "ResourceClaims the scheduler created for extended resources that DeviceClasses provide, "
    "by outcome.",
    "status",
)
POD_SCHEDULED_AFTER_FLUSH = _counter(
    "scheduler_pod_scheduled_after_flush_total",
    "Pods bound after the periodic flush moved them out of the unschedulable pool (they "
    "waited there longer than the flush interval): many point to a cluster event that no "
    "queueing hint requeues them for.",
)
# Opportunistic batching (`runtime/batching.py`): whether a pod could reuse the scores of the
# pod before it, and why a kept ranking was dropped.
_BATCH_SECONDS = exponential_buckets(0.00001, 2, 12)  # 10us .. ~20ms
BATCH_ATTEMPTS = _counter(
    "scheduler_batch_attempts_total",
    "Pods that asked for a node hint, by result: 'no_hint' (none could be given), "
    "'hint_used' (the hinted node was chosen without scoring), 'hint_not_used'.",
    "profile",
    "result",
)
BATCH_CACHE_FLUSHED = _counter(
    "scheduler_batch_cache_flushed_total",
    "Kept rankings dropped, by reason (pod_skipped, pod_failed, pod_incompatible, expired, "
    "node_missing, node_not_full, empty_list, pod_not_batchable).",
    "profile",
    "reason",
)
GET_NODE_HINT_DURATION = _histogram(
    "scheduler_get_node_hint_duration_seconds",
    "Seconds spent deciding whether the kept ranking gives a pod a node hint.",
    _BATCH_SECONDS,
    "hinted",
    "profile",
)
STORE_SCHEDULE_RESULTS_DURATION = _histogram(
    "scheduler_store_schedule_results_duration_seconds",
    "Seconds spent keeping an attempt's ranking of nodes for the pods after it.",
    _BATCH_SECONDS,
    "profile",
)
# Shared with every Kubernetes component that elects a leader, hence no `scheduler_` prefix.
LEADER_ELECTION_MASTER_STATUS = _gauge(
    "leader_election_master_status",
    "1 while this process holds the named lease, 0 otherwise.",
    "name",
)
LEADER_ELECTION_SLOWPATH = _counter(
    "leader_election_slowpath_total",
    "Renewals of the named lease that had to read it first, their optimistic write refused.",
    "name",
)
# Ours: upstream's event broadcaster drops silently; an operator should see it happen.
EVENTS_DROPPED = _counter(
    "scheduler_events_dropped_total",
    "Events given up without being written, by reason (queue_full, retries_exhausted, "
    "rejected, shutdown).",
    "reason",
)

# Ours: a pod naming a scheduler nobody runs stays Pending silently; the rollback alert
# (deploy/monitoring/prometheusrule.yaml) fires on this.
UNSERVED_PODS = _gauge(
    "scheduler_unserved_pods",
    "Unassigned pods naming a schedulerName that no running scheduler serves (served: this "
    "scheduler's profiles and default-scheduler), by that schedulerName.",
    "scheduler_name",
    scraped=True,
)

# The two families of `/metrics/resources` (see `pod_resources`). They are not in `ALL`: their
# O(pods) series are served on their own path, never on `/metrics`. Labels are in the order the
# Go client writes them (sorted by name).
_POD_RESOURCE_LABELS = ("namespace", "node", "pod", "priority", "resource", "scheduler", "unit")
POD_RESOURCE_REQUEST = _gauge(
    "kube_pod_resource_request",
    "What each non-terminal pod requests, per resource, as the scheduler and the kubelet count "
    "it (containers, sidecars and init steps, pod-level resources, overhead), with the "
    "resource's unit where known.",
    *_POD_RESOURCE_LABELS,
    stability=Stability.STABLE,
)
POD_RESOURCE_LIMIT = _gauge(
    "kube_pod_resource_limit",
    "What each non-terminal pod is limited to, per resource, summed as its requests are, with "
    "the resource's unit where known.",
    *_POD_RESOURCE_LABELS,
    stability=Stability.STABLE,
)

# The two families of `/metrics/slis` (see `health_slis`): the outcome of every health check an
# endpoint ran, as component-base records them. Not in `ALL` either: kube-scheduler serves them
# only on their own path. Labels in the Go client's (sorted) order.
HEALTHCHECK = _gauge(
    "kubernetes_healthcheck",
    "Whether a health check passed (1) or failed (0) the last time an endpoint ran it.",
    "name",
    "type",
    stability=Stability.STABLE,
)
HEALTHCHECKS = _counter(
    "kubernetes_healthchecks_total",
    "Health checks run by the health endpoints, by check, endpoint and outcome.",
    "name",
    "status",
    "type",
    stability=Stability.STABLE,
)

# Families plugins report at scrape time (Coscheduling and CapacityScheduling); they are not
# upstream kube-scheduler's, which has no gang or quota plugins.
PODGROUPS_WAITING_AT_PERMIT = _gauge(
    "scheduler_podgroups_waiting_at_permit",
    "PodGroups with members waiting at Permit for the rest of their quorum.",
    "profile",
    scraped=True,
)
# kube-scheduler registers a family of this name and these labels for its own pod groups
# (GenericWorkload, alpha); a gang's attempt here ends with the same two of its results, so a
# dashboard built for either reads the other.
PODGROUP_SCHEDULE_ATTEMPTS = MetricSpec(
    "scheduler_podgroup_schedule_attempts_total",
    Kind.COUNTER,
    "Gang scheduling attempts of PodGroups by result: 'scheduled' when the quorum was reached, "
    "'unschedulable' when the waiting members were turned away.",
    ("profile", "result"),
    scraped=True,
)
ELASTIC_QUOTA_USED = _gauge(
    "scheduler_elasticquota_used",
    "Requests of an ElasticQuota namespace's scheduled pods (CPU in cores, memory in bytes).",
    "namespace",
    "resource",
    scraped=True,
)
ELASTIC_QUOTA_MIN = _gauge(
    "scheduler_elasticquota_min",
    "An ElasticQuota's guaranteed amount (CPU in cores, memory in bytes).",
    "namespace",
    "resource",
    scraped=True,
)
ELASTIC_QUOTA_MAX = _gauge(
    "scheduler_elasticquota_max",
    "An ElasticQuota's cap, for the resources it caps (CPU in cores, memory in bytes).",
    "namespace",
    "resource",
    scraped=True,
)
# Families of the plugins that score from Prometheus data (LoadAware, GPUAware), labelled by
# profile and plugin; our own, hence the project prefix.
_PROFILE_PLUGIN = ("profile", "plugin")
PROMETHEUS_DATA_AGE = MetricSpec(
    "kube_pyscheduler_plugin_prometheus_data_age_seconds",
    Kind.GAUGE,
    "Seconds since the plugin's newest value from Prometheus was fetched (-1 before the first).",
    _PROFILE_PLUGIN,
    scraped=True,
)
PROMETHEUS_STALE = MetricSpec(
    "kube_pyscheduler_plugin_prometheus_stale",
    Kind.GAUGE,
    "1 while the plugin has no value fresher than maxStalenessSeconds and so scores every node "
    "neutrally.",
    _PROFILE_PLUGIN,
    scraped=True,
)
PROMETHEUS_QUERIES = MetricSpec(
    "kube_pyscheduler_plugin_prometheus_queries_total",
    Kind.COUNTER,
    "PromQL queries the plugin sent, by result (success, error); retries count.",
    (*_PROFILE_PLUGIN, "result"),
    scraped=True,
)
NEUTRAL_SCORES = MetricSpec(
    "kube_pyscheduler_plugin_neutral_scores_total",
    Kind.COUNTER,
    "Scoring calls in which the plugin scored every node neutrally for want of fresh data.",
    _PROFILE_PLUGIN,
    scraped=True,
)
# IPAllocation's pool writes, labelled by profile; our own, hence the project prefix.
IP_ALLOCATIONS = MetricSpec(
    "kube_pyscheduler_plugin_ip_allocations_total",
    Kind.COUNTER,
    "Pool writes of IPAllocation by result: allocated, released, failed.",
    ("profile", "result"),
    scraped=True,
)
IP_POOL_WRITE_CONFLICTS = MetricSpec(
    "kube_pyscheduler_plugin_ip_pool_write_conflicts_total",
    Kind.COUNTER,
    "IPPool writes refused for a stale resourceVersion, each followed by a re-read.",
    ("profile",),
    scraped=True,
)
PLUGIN_REPORTED: tuple[MetricSpec, ...] = (
    PODGROUPS_WAITING_AT_PERMIT,
    PODGROUP_SCHEDULE_ATTEMPTS,
    ELASTIC_QUOTA_USED,
    ELASTIC_QUOTA_MIN,
    ELASTIC_QUOTA_MAX,
    PROMETHEUS_DATA_AGE,
    PROMETHEUS_STALE,
    PROMETHEUS_QUERIES,
    NEUTRAL_SCORES,
    IP_ALLOCATIONS,
    IP_POOL_WRITE_CONFLICTS,
)
"""Families plugins report through `MetricsReporter`, read when /metrics is scraped."""

ALL: tuple[MetricSpec, ...] = (
    SCHEDULE_ATTEMPTS,
    SCHEDULING_ATTEMPT_DURATION,
    SCHEDULING_ALGORITHM_DURATION,
    PENDING_PODS,
    QUEUE_INCOMING_PODS,
    PREEMPTION_ATTEMPTS,
    PREEMPTION_VICTIMS,
    POD_SCHEDULING_ATTEMPTS,
    POD_SCHEDULING_SLI_DURATION,
    FRAMEWORK_EXTENSION_POINT_DURATION,
    PLUGIN_EXECUTION_DURATION,
    PLUGIN_EVALUATION,
    UNSCHEDULABLE_PODS,
    GOROUTINES,
    PERMIT_WAIT_DURATION,
    CACHE_SIZE,
    EVENT_HANDLING_DURATION,
    QUEUEING_HINT_EXECUTION_DURATION,
    INFLIGHT_EVENTS,
    PREEMPTION_GOROUTINES_DURATION,
    PREEMPTION_GOROUTINES_EXECUTION,
    VOLUME_BINDER_CACHE_REQUESTS,
    VOLUME_SCHEDULING_STAGE_ERROR,
    DRA_BINDING_CONDITIONS_ALLOCATIONS,
    DRA_BINDING_CONDITIONS_WAIT,
    RESOURCE_CLAIM_CREATES,
    POD_SCHEDULED_AFTER_FLUSH,
    BATCH_ATTEMPTS,
    BATCH_CACHE_FLUSHED,
    GET_NODE_HINT_DURATION,
    STORE_SCHEDULE_RESULTS_DURATION,
    LEADER_ELECTION_MASTER_STATUS,
    LEADER_ELECTION_SLOWPATH,
    EVENTS_DROPPED,
    UNSERVED_PODS,
    *PLUGIN_REPORTED,
)
"""Every family the scheduler registers."""
