"""QueueingHints of NodeUnschedulable."""

from __future__ import annotations

from plugins.helpers import node_change
from plugins.helpers import pod_change
from plugins.node_unschedulable.tolerance import tolerates_unschedulable
from scheduler.framework import Pod
from scheduler.framework import QueueingHint


def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when a schedulable node is added or a node stops being unschedulable."""
    before, after = node_change(old, new)
    if after.unschedulable:
        return QueueingHint.QUEUE_SKIP
    if before is None or before.unschedulable:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_toleration_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the rejected pod itself gains a toleration of the unschedulable taint.

    The old tolerations need no look: tolerations can only be added, and a pod that already
    tolerated the taint would not have been rejected by this plugin.
    """
    _, updated = pod_change(old, new)
    if updated.uid == pod.uid and tolerates_unschedulable(updated):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
