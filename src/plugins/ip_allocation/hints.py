"""Which cluster events can help a pod IPAllocation turned away: a pool of its network that
appears, changes or gives addresses back, and a node that may now fall in a zone's pool."""

from __future__ import annotations

from collections.abc import Mapping

from plugins.ip_allocation.annotations import requested_network
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import Pod
from scheduler.framework import QueueingHint


def after_pool_changed(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(new, Mapping):
        return QueueingHint.QUEUE_SKIP
    network = (new.get("spec") or {}).get("network")
    return QueueingHint.QUEUE if network == requested_network(pod) else QueueingHint.QUEUE_SKIP


def ip_allocation_events() -> list[ClusterEventWithHint]:
    return [
        ClusterEventWithHint(
            ClusterEvent(EventResource.IP_POOL, ActionType.ADD | ActionType.UPDATE),
            after_pool_changed,
        ),
        ClusterEventWithHint(
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
        ),
    ]
