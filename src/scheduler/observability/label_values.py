"""Label values upstream uses, so callers and dashboards spell them the same way."""

from __future__ import annotations

from typing import Final

# scheduler_schedule_attempts_total / scheduler_scheduling_attempt_duration_seconds {result}
SCHEDULED: Final = "scheduled"
UNSCHEDULABLE: Final = "unschedulable"
ERROR: Final = "error"

# scheduler_pending_pods / scheduler_queue_incoming_pods_total {queue}
QUEUE_ACTIVE: Final = "active"
QUEUE_BACKOFF: Final = "backoff"
QUEUE_UNSCHEDULABLE: Final = "unschedulable"
QUEUE_GATED: Final = "gated"

# scheduler_queue_incoming_pods_total {event}: events raised by the queue itself; cluster
# events use their ClusterEvent label (NodeAdd, AssignedPodDelete, ...).
EVENT_SCHEDULE_ATTEMPT_FAILURE: Final = "ScheduleAttemptFailure"
EVENT_BACKOFF_COMPLETE: Final = "BackoffComplete"
EVENT_FORCE_ACTIVATE: Final = "ForceActivate"
EVENT_UNSCHEDULABLE_TIMEOUT: Final = "UnschedulableTimeout"
EVENT_UNSCHEDULED_POD_ADD: Final = "UnschedulablePodAdd"
EVENT_UNSCHEDULED_POD_UPDATE: Final = "UnschedulablePodUpdate"
# scheduler_inflight_events {event}: the pseudo-event recorded when a pod is popped.
EVENT_POD_POPPED: Final = "PodPopped"

# scheduler_framework_extension_point_duration_seconds {extension_point} and friends.
PRE_ENQUEUE: Final = "PreEnqueue"
PRE_FILTER: Final = "PreFilter"
FILTER: Final = "Filter"
PRE_FILTER_EXTENSION_ADD_POD: Final = "PreFilterExtensionAddPod"
PRE_FILTER_EXTENSION_REMOVE_POD: Final = "PreFilterExtensionRemovePod"
POST_FILTER: Final = "PostFilter"
PRE_SCORE: Final = "PreScore"
SCORE: Final = "Score"
SCORE_EXTENSION_NORMALIZE: Final = "ScoreExtensionNormalize"
RESERVE: Final = "Reserve"
UNRESERVE: Final = "Unreserve"
PERMIT: Final = "Permit"
PRE_BIND_PRE_FLIGHT: Final = "PreBindPreFlight"
PRE_BIND: Final = "PreBind"
BIND: Final = "Bind"
POST_BIND: Final = "PostBind"

# scheduler_queueing_hint_execution_duration_seconds {hint}
HINT_QUEUE: Final = "Queue"
HINT_QUEUE_SKIP: Final = "QueueSkip"
HINT_ERROR: Final = "Error"

# scheduler_goroutines {operation}
OPERATION_BINDING: Final = "binding"
OPERATION_PRIORITIZING_EXTENDER: Final = "prioritizing_extender"

# scheduler_cache_size {type}
CACHE_NODES: Final = "nodes"
CACHE_PODS: Final = "pods"
CACHE_ASSUMED_PODS: Final = "assumed_pods"

# scheduler_preemption_goroutines_execution_total / async API calls {result}
SUCCESS: Final = "success"
# (errors use ERROR above)

# scheduler_pod_scheduling_sli_duration_seconds {attempts}: 15 and more share one label.
MAX_ATTEMPTS_LABEL: Final = 15


def attempts_label(attempts: int) -> str:
    """The `attempts` label upstream uses: "1" .. "14", then "15+" for every higher count."""
    if attempts >= MAX_ATTEMPTS_LABEL:
        return f"{MAX_ATTEMPTS_LABEL}+"
    return str(attempts)
