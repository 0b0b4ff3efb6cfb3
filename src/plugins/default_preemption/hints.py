"""Events for a preemptor held back by PreEnqueue while its preemption runs.

The plugin never decides when such a pod is requeued: the plugins that rejected it in the
cycle (say, NodeResourcesFit) do, through their own hints on the victims' deletion. The
registration only lets those deletion events reach a pod this plugin gates; its hint always
answers QueueSkip.
"""

from __future__ import annotations

from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import Pod
from scheduler.framework import QueueingHint


def skip_after_assigned_pod_deletion(pod: Pod, old: object, new: object) -> QueueingHint:
    del pod, old, new
    return QueueingHint.QUEUE_SKIP


def preemption_events() -> list[ClusterEventWithHint]:
    return [
        ClusterEventWithHint(
            ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
            skip_after_assigned_pod_deletion,
        )
    ]
