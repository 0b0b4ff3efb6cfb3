"""Cluster events that may make a pod rejected by PodTopologySpread schedulable, and the hints
that tell the queue whether a given event does.

Only the pod's hard constraints matter here: soft ones never reject. A pod event counts when it
is about the pending pod itself or about an assigned pod in its namespace, and it changes
whether that pod is counted (added or deleted while matching a selector, relabelled across a
selector, or - for the pending pod - new tolerations while some constraint honours taints). A
node event counts when the node joins or leaves the nodes carrying every topology key, changes
a topology value, or changes taints while some constraint honours taints.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping

from plugins.helpers import deleted_pod
from plugins.helpers import node_change
from plugins.helpers import pod_change
from plugins.helpers.pod_events import placed_pod_events
from plugins.pod_topology_spread.constraints import SpreadConstraint
from plugins.pod_topology_spread.constraints import has_all_keys
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import QueueingHint

QUEUE = QueueingHint.QUEUE
QUEUE_SKIP = QueueingHint.QUEUE_SKIP

HardConstraints = Callable[[Pod], tuple[SpreadConstraint, ...]]


def _involved(changed: Pod, pending: Pod) -> bool:
    """The pending pod itself, or a pod on a node, or nominated to one (Filter counts those
    too), in the pending pod's namespace."""
    if changed.uid == pending.uid:
        return True
    placed = changed.node_name or changed.nominated_node_name
    return bool(placed) and changed.namespace == pending.namespace


def _selected_by_any(constraints: tuple[SpreadConstraint, ...], labels: Mapping[str, str]) -> bool:
    return any(c.selects(labels) for c in constraints)


def _honours_taints(constraints: tuple[SpreadConstraint, ...]) -> bool:
    return any(c.honor_node_taints for c in constraints)


class SpreadHints:
    """QueueingHint functions; `hard_constraints` gives a pod's DoNotSchedule constraints
    (its own or the defaults), raising for constraints that cannot be parsed."""

    def __init__(self, hard_constraints: HardConstraints) -> None:
        self._hard_constraints = hard_constraints

    def events(self) -> list[ClusterEventWithHint]:
        return [
            *placed_pod_events(
                ActionType.ADD
                | ActionType.UPDATE_POD_LABEL
                | ActionType.UPDATE_POD_TOLERATIONS
                | ActionType.DELETE,
                self.after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.DELETE
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_TAINT,
                ),
                self.after_node_change,
            ),
        ]

    def after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        if new is None:
            original: Pod | None = deleted_pod(old, new)
            modified: Pod | None = None
        else:
            original, modified = pod_change(old, new)
        if (modified is not None and not _involved(modified, pod)) or (
            original is not None and not _involved(original, pod)
        ):
            return QUEUE_SKIP
        constraints = self._hard_constraints(pod)
        if original is not None and modified is not None:
            if (
                modified.uid == pod.uid
                and modified.tolerations != original.tolerations
                and _honours_taints(constraints)
            ):
                return QUEUE
            if dict(modified.labels) == dict(original.labels):
                return QUEUE_SKIP
            for constraint in constraints:
                if constraint.selects(original.labels) != constraint.selects(modified.labels):
                    return QUEUE
            return QUEUE_SKIP
        if modified is not None:  # added
            return QUEUE if _selected_by_any(constraints, modified.labels) else QUEUE_SKIP
        if original is not None:  # deleted
            return QUEUE if _selected_by_any(constraints, original.labels) else QUEUE_SKIP
        return QUEUE

    def after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        original: Node | None
        modified: Node | None
        if new is None:
            if not isinstance(old, Node):
                raise TypeError(f"expected the deleted node, got {type(old).__name__}")
            original, modified = old, None
        else:
            original, modified = node_change(old, new)
        constraints = self._hard_constraints(pod)
        was_domain = original is not None and has_all_keys(original.labels, constraints)
        is_domain = modified is not None and has_all_keys(modified.labels, constraints)
        if original is not None and modified is not None:
            if was_domain != is_domain:
                return QUEUE
            if not is_domain:
                return QUEUE_SKIP
            for constraint in constraints:
                key = constraint.topology_key
                if original.labels.get(key) != modified.labels.get(key):
                    return QUEUE
            if original.taints != modified.taints and _honours_taints(constraints):
                return QUEUE
            return QUEUE_SKIP
        return QUEUE if was_domain or is_domain else QUEUE_SKIP
