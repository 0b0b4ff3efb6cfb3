"""QueueingHints of TaintToleration."""

from __future__ import annotations

from plugins.helpers import DO_NOT_SCHEDULE_EFFECTS
from plugins.helpers import node_change
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.objects.taints import first_untolerated


def is_schedulable_after_node_change(
    pod: Pod, old: object, new: object, *, comparisons: bool = False
) -> QueueingHint:
    """Queue when the node is new or had an untolerated taint, and now has none."""
    before, after = node_change(old, new)

    def untolerated(node: Node) -> bool:
        taints, tolerations = node.taints, pod.tolerations
        found = first_untolerated(
            taints, tolerations, DO_NOT_SCHEDULE_EFFECTS, comparisons=comparisons
        )
        return found is not None

    was_untolerated = before is None or untolerated(before)
    is_untolerated = untolerated(after)
    if was_untolerated and not is_untolerated:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
