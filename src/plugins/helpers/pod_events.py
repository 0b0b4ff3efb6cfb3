"""Registrations for the changes of other pods that plugins counting placed pods look at."""

from __future__ import annotations

from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import QueueingHintFn


def placed_pod_events(actions: ActionType, hint: QueueingHintFn) -> list[ClusterEventWithHint]:
    """`actions` of assigned pods, and the updates among them of unscheduled pods, with `hint`.

    Upstream registers these for any pod, but hands a waiting pod only two kinds of events
    about unscheduled pods: its own updates, and updates of a pod nominated to a node (which
    Filter counts as placed there). It never offers an unscheduled pod's arrival or departure
    (a nominated pod's departure comes as an assigned pod's). Registering the arrival too would
    cost one hint call per waiting pod for every pod created, and change nothing.
    """
    events = [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, actions), hint)]
    updates = actions & ActionType.UPDATE
    if updates:
        events.append(
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, updates), hint)
        )
    return events
