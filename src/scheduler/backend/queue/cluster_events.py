"""Turning object changes into ClusterEvents, and naming events as upstream's metrics do."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.framework.events import FORCE_ACTIVATE
from scheduler.framework.events import UNSCHEDULABLE_TIMEOUT
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import EventResource
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod

# Wildcard events move pods regardless of the hints (see hints.py); they carry custom labels.
FORCE_ACTIVATE_EVENT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, FORCE_ACTIVATE)
UNSCHEDULABLE_TIMEOUT_EVENT = ClusterEvent(
    EventResource.WILDCARD, ActionType.ALL, UNSCHEDULABLE_TIMEOUT
)

# Upstream's spelling of each action, as it appears in event labels.
_ACTION_NAMES: dict[ActionType, str] = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_NODE_DECLARED_FEATURE: "UpdateNodeDeclaredFeature",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_TOLERATIONS: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.UPDATE_OTHER: "Update",
    ActionType.UPDATE: "Update",
    ActionType.ALL: "All",
}


# Upstream names the kinds of API groups other than the core one with their group, and labels
# their events so ("storage.k8s.io/StorageClassAdd"); dashboards select on these labels.
_GROUPED_RESOURCES: dict[EventResource, str] = {
    EventResource.STORAGE_CLASS: "storage.k8s.io/StorageClass",
    EventResource.CSI_NODE: "storage.k8s.io/CSINode",
    EventResource.CSI_DRIVER: "storage.k8s.io/CSIDriver",
    EventResource.CSI_STORAGE_CAPACITY: "storage.k8s.io/CSIStorageCapacity",
    EventResource.VOLUME_ATTACHMENT: "storage.k8s.io/VolumeAttachment",
    EventResource.RESOURCE_CLAIM: "resource.k8s.io/ResourceClaim",
    EventResource.RESOURCE_SLICE: "resource.k8s.io/ResourceSlice",
    EventResource.DEVICE_CLASS: "resource.k8s.io/DeviceClass",
}


def resource_label(resource: EventResource) -> str:
    """How upstream spells the kind at the head of an event's label."""
    return _GROUPED_RESOURCES.get(resource, resource.value)


def action_name(action: ActionType) -> str:
    """`UpdateNodeLabel`; a combination of bits joins the single names with `|`."""
    name = _ACTION_NAMES.get(action)
    if name is not None:
        return name
    return "|".join(
        _ACTION_NAMES[bit] for bit in _ACTION_NAMES if bit.bit_count() == 1 and bit & action
    )


def event_label(event: ClusterEvent) -> str:
    """The label used in logs and metrics: the custom label, else resource + action."""
    return event.label or f"{resource_label(event.resource)}{action_name(event.action)}"


def labelled(resource: EventResource, action: ActionType) -> ClusterEvent:
    event = ClusterEvent(resource, action)
    return ClusterEvent(resource, action, event_label(event))


def _generated_claims(pod: Pod) -> tuple[Any, ...]:
    """What upstream compares to tell that the claims made for a pod changed: each entry of
    `resourceClaimStatuses` by name and claim (none and an empty list alike), and the claim
    made for its extended resources (`extendedResourceClaimStatus`) with its mappings."""
    status: Mapping[str, Any] = pod.raw.get("status") or {}
    entries = tuple(
        (entry.get("name"), entry.get("resourceClaimName"))
        for entry in status.get("resourceClaimStatuses") or ()
    )
    extended = status.get("extendedResourceClaimStatus")
    if extended is None:
        return (entries, None)
    mappings = tuple(
        tuple(sorted(m.items())) for m in extended.get("requestMappings") or () if m is not None
    )
    return (entries, (extended.get("resourceClaimName") or "", mappings))


def _scaled_down(old: Pod, new: Pod) -> bool:
    """Some request was lowered or removed."""
    for resource, before in old.requests.items():
        after = new.requests.get(resource)
        if after is None or after < before:
            return True
    return False


def pod_update_events(old: Pod, new: Pod) -> list[ClusterEvent]:
    """The scheduling-relevant changes between two versions of a pod, one event per kind.

    The resource is AssignedPod for a bound pod and UnschedulablePod otherwise; a change that
    fits no specific kind yields one generic update event, which only registrations for the
    whole Pod/Update action match.
    """
    resource = EventResource.ASSIGNED_POD if new.node_name else EventResource.UNSCHEDULED_POD
    actions: list[ActionType] = []
    if dict(old.labels) != dict(new.labels):
        actions.append(ActionType.UPDATE_POD_LABEL)
    if _scaled_down(old, new):
        actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if old.scheduling_gates and not new.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if old.tolerations != new.tolerations:
        actions.append(ActionType.UPDATE_POD_TOLERATIONS)
    if _generated_claims(old) != _generated_claims(new):
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    if not actions:
        actions.append(ActionType.UPDATE_OTHER)
    return [labelled(resource, action) for action in actions]


def _raw_taints(node: Node) -> Any:
    # Compared whole, `timeAdded` included, as upstream compares the Go structs; absent and
    # empty alike.
    return (node.raw.get("spec") or {}).get("taints") or []


def _condition_statuses(node: Node) -> dict[str, str]:
    # Heartbeat and transition times change constantly and never matter for scheduling.
    return {str(c.get("type")): str(c.get("status")) for c in node.conditions}


def node_update_events(old: Node, new: Node) -> list[ClusterEvent]:
    """One Node event per scheduling-relevant aspect that changed, in upstream's order (its
    NodeSchedulingPropertiesChange); none when only heartbeats did.

    A node opening up again (spec.unschedulable cleared) counts as a taint change of its own,
    before a change of the taints themselves, which is another.
    """
    actions: list[ActionType] = []
    if old.unschedulable and not new.unschedulable:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if dict(old.allocatable) != dict(new.allocatable):
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if dict(old.labels) != dict(new.labels):
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if old.taints != new.taints or _raw_taints(old) != _raw_taints(new):
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if _condition_statuses(old) != _condition_statuses(new):
        actions.append(ActionType.UPDATE_NODE_CONDITION)
    if dict(old.annotations) != dict(new.annotations):
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    if old.declared_features != new.declared_features:
        actions.append(ActionType.UPDATE_NODE_DECLARED_FEATURE)
    return [labelled(EventResource.NODE, action) for action in actions]
