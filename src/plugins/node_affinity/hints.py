"""QueueingHints of NodeAffinity."""

from __future__ import annotations

from plugins.helpers import RequiredNodeAffinity
from plugins.helpers import node_change
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework import QueueingHintFn
from scheduler.objects.node_selector import NodeSelector


def node_change_hint(added: NodeSelector | None) -> QueueingHintFn:
    """Build the Node Add/UpdateNodeLabel hint for a profile's added required affinity."""

    def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
        before, after = node_change(old, new)
        if added is not None and not added.matches(after.labels, after.name):
            return QueueingHint.QUEUE_SKIP
        required = RequiredNodeAffinity.of_pod(pod)
        if not required.matches(after):
            return QueueingHint.QUEUE_SKIP
        # A new matching node helps; an updated one only if it did not match before.
        if before is None or not required.matches(before):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    return is_schedulable_after_node_change
