"""QueueingHints of TaintToleration."""

from __future__ import annotations

from plugins.helpers import DO_NOT_SCHEDULE_EFFECTS
from plugins.helpers import node_change
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.objects.taints import first_untolerated


def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the node is new or had an untolerated taint, and now has none."""
    before, after = node_change(old, new)
    was_untolerated = before is None or (
        first_untolerated(before.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
    )
    is_untolerated = (
        first_untolerated(after.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
    )
    if was_untolerated and not is_untolerated:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
