"""Which cluster events can help a pod Coscheduling turned away, and when."""

from __future__ import annotations

from collections.abc import Mapping

from plugins.coscheduling.dialects import group_of_raw
from plugins.coscheduling.dialects import ref_of_group_object
from plugins.coscheduling.dialects import resource_of_api_version
from plugins.helpers import pod_change
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework import QueueingHintFn


def _same_group(pod: Pod, other: Pod) -> bool:
    mine = group_of_raw(pod.raw)
    return mine is not None and group_of_raw(other.raw) == mine


def after_member_changed(pod: Pod, old: object, new: object) -> QueueingHint:
    """A sibling appeared, lost its gates, or a pod was relabelled into the group: the quorum
    may be met now."""
    _, updated = pod_change(old, new)
    return QueueingHint.QUEUE if _same_group(pod, updated) else QueueingHint.QUEUE_SKIP


def after_group_changed(pod: Pod, old: object, new: object) -> QueueingHint:
    """The pod's own PodGroup was created or its spec changed (minMember, minResources,
    timeout); status writes are not news to its members."""
    if not isinstance(new, Mapping):
        return QueueingHint.QUEUE_SKIP
    if isinstance(old, Mapping) and old.get("spec") == new.get("spec"):
        return QueueingHint.QUEUE_SKIP
    resource = resource_of_api_version(str(new.get("apiVersion") or ""))
    mine = group_of_raw(pod.raw)
    if mine is None or resource is None:
        return QueueingHint.QUEUE_SKIP
    return (
        QueueingHint.QUEUE
        if ref_of_group_object(resource, new) == mine
        else QueueingHint.QUEUE_SKIP
    )


def coscheduling_events(after_assigned_pod_gone: QueueingHintFn) -> list[ClusterEventWithHint]:
    return [
        ClusterEventWithHint(
            ClusterEvent(
                EventResource.POD,
                ActionType.ADD
                | ActionType.UPDATE_POD_LABEL
                | ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
            ),
            after_member_changed,
        ),
        ClusterEventWithHint(
            ClusterEvent(EventResource.POD_GROUP, ActionType.ADD | ActionType.UPDATE),
            after_group_changed,
        ),
        # A member rejected with its group can be helped by any room that frees up, and by
        # its siblings giving their places back (which the scheduler reports as assigned
        # pods going away), unless the member that fit nowhere still holds the group back.
        ClusterEventWithHint(
            ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), after_assigned_pod_gone
        ),
        ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
    ]
