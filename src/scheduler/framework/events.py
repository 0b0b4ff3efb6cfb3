"""Cluster events and QueueingHints: how plugins say which changes can help a rejected pod."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from enum import IntFlag
from enum import StrEnum
from typing import Any

from scheduler.objects.node import Node
from scheduler.objects.pod import Pod


class ActionType(IntFlag):
    """What happened to an object; a bit set so a registration can name several."""

    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATIONS = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
    UPDATE_OTHER = 1 << 12
    UPDATE_NODE_DECLARED_FEATURE = 1 << 13
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_NODE_DECLARED_FEATURE
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATIONS
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
        | UPDATE_OTHER
    )
    ALL = ADD | DELETE | UPDATE


class EventResource(StrEnum):
    """The kind of object an event is about. POD in a registration means any pod event."""

    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnschedulablePod"
    NODE = "Node"
    NAMESPACE = "Namespace"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    VOLUME_ATTACHMENT = "VolumeAttachment"
    POD_DISRUPTION_BUDGET = "PodDisruptionBudget"
    POD_GROUP = "PodGroup"
    ELASTIC_QUOTA = "ElasticQuota"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    IP_POOL = "IPPool"
    WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A change in the cluster, or (in a registration) a pattern of changes."""

    resource: EventResource
    action: ActionType
    label: str = ""

    def matches(self, event: ClusterEvent) -> bool:
        """True if this registration pattern covers the concrete `event`."""
        if self.resource is EventResource.WILDCARD:
            return True
        if self.resource is not event.resource and not (
            self.resource is EventResource.POD
            and event.resource in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD)
        ):
            return False
        return bool(self.action & event.action)

    @property
    def is_wildcard(self) -> bool:
        return self.resource is EventResource.WILDCARD

    def __str__(self) -> str:
        return self.label or f"{self.resource.value}{self.action.name or int(self.action)}"


class QueueingHint(IntEnum):
    """A QueueingHint's answer."""

    QUEUE_SKIP = 0
    """The event cannot make the pod schedulable: leave it where it waits."""
    QUEUE = 1
    """The event may make the pod schedulable: retry it."""


EventObject = Pod | Node | Mapping[str, Any] | None
"""What changed in a cluster event, as a QueueingHint receives it: a `Pod` for pod events, a
`Node` for node events, the raw API object (a mapping) for every other resource a plugin
watches, and None for the missing side (no `old` on an Add, no `new` on a Delete)."""

QueueingHintFn = Callable[[Pod, EventObject, EventObject], QueueingHint]
"""`hint(rejected_pod, old, new)`: may this event make the pod schedulable?

Return `QueueingHint.QUEUE` if it may (the pod is retried, after backoff if it was rejected
as Unschedulable) or `QueueingHint.QUEUE_SKIP` if it cannot help. A hint must be cheap and
must not raise: the scheduler treats an exception or a wrong return value as QUEUE, logs it,
and keeps going, so a broken hint costs retries, never a stranded pod.
"""


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """An event a plugin registers from `events_to_register`, with an optional hint.

    Without a hint every matching event retries the pods the plugin rejected.
    """

    event: ClusterEvent
    hint: QueueingHintFn | None = None


def _event(resource: EventResource, action: ActionType, label: str) -> ClusterEvent:
    return ClusterEvent(resource, action, label)


# Concrete events the scheduler itself emits, labelled as upstream's metrics label them.
ASSIGNED_POD_ADD = _event(EventResource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE = _event(EventResource.ASSIGNED_POD, ActionType.UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = _event(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
NODE_ADD = _event(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = _event(EventResource.NODE, ActionType.DELETE, "NodeDelete")
UNSCHEDULED_POD_ADD = _event(EventResource.UNSCHEDULED_POD, ActionType.ADD, "UnschedulablePodAdd")
UNSCHEDULED_POD_UPDATE = _event(
    EventResource.UNSCHEDULED_POD, ActionType.UPDATE, "UnschedulablePodUpdate"
)
UNSCHEDULED_POD_DELETE = _event(
    EventResource.UNSCHEDULED_POD, ActionType.DELETE, "UnschedulablePodDelete"
)
WILDCARD_EVENT = _event(EventResource.WILDCARD, ActionType.ALL, "*")
# Labels used by queue moves that are not caused by an object change.
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

# What a pod's rejectors include when an HTTP extender filtered nodes out, spelled as
# upstream's framework.ExtenderName (it shows in the scheduler_unschedulable_pods plugin label).
# Extenders cannot say which events may help, so when any is configured the queue retries such
# a pod on every event about the resources kube-scheduler watches (see `Profile.queueing_hints`).
EXTENDER_REJECTOR = "Extender"
