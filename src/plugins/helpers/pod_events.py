"""Registrations for the changes of other pods that plugins counting placed pods look at."""

from __future__ import annotations

from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import QueueingHintFn


def placed_pod_events(actions: ActionType, hint: QueueingHintFn) -> list[ClusterEventWithHint]:
    """`actions` of assigned pods, and the updates among them of unscheduled pods, with `hint`.

    Upstream registers these for any pod, but hands a waiting pod no event about another
    unscheduled pod (a nominated pod's departure comes as an assigned pod's). The scheduler
    here offers other pending pods' changes too (for gangs), so these hints also see a pod
    nominated to a node change its labels, which Filter counts as placed there: one more
    retry than upstream gives, never one fewer. Registering arrivals too would cost one hint
    call per waiting pod for every pod created, and change nothing.
    """
    events = [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, actions), hint)]
    updates = actions & ActionType.UPDATE
    if updates:
        events.append(
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, updates), hint)
        )
    return events
