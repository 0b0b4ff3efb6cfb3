"""Cluster events that may make a pod rejected by InterPodAffinity schedulable, and the hints
that tell the queue whether a given event does.

The hints follow upstream's: a pod on a node, or nominated to one (Filter counts those too),
takes part; the pending pod's own relabelling requeues it; and so does the deletion of an
assigned pod whose required anti-affinity repelled the pending pod. Two additions only ever
queue more, closing gaps where a pod would otherwise wait for the periodic flush: a deleted
pod that matched the affinity of a pod selecting itself (the pending pod may now be the first
of its group), and, for a pod without required affinity terms, any added or relabelled node
(existing pods' anti-affinity may not cover it). Namespace selectors of the pending pod's
terms are matched against the labels of the changed pod's namespace, as Filter matches them,
where upstream's hint uses an empty label set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugins.helpers import as_view
from plugins.helpers.pod_events import placed_pod_events
from plugins.inter_pod_affinity.terms import NAMESPACES
from plugins.inter_pod_affinity.terms import matches_all_terms
from plugins.inter_pod_affinity.terms import namespace_labels
from plugins.inter_pod_affinity.terms import required_affinity_terms
from plugins.inter_pod_affinity.terms import required_anti_affinity_terms
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import Handle
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import QueueingHint

QUEUE = QueueingHint.QUEUE
QUEUE_SKIP = QueueingHint.QUEUE_SKIP


class AffinityHints:
    """QueueingHint functions; they read namespace labels through the handle's lister."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def events(self) -> list[ClusterEventWithHint]:
        return [
            # A pod on a node (or nominated to one) appearing, changing labels or leaving can
            # satisfy the pending pod's affinity or lift an anti-affinity conflict; so can the
            # pending pod's own labels changing.
            *placed_pod_events(
                ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
                self.after_pod_change,
            ),
            # A node gaining, losing or changing a topology label changes the domains.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.after_node_change,
            ),
        ]

    def _labels_of_namespace(self, namespace: str) -> Mapping[str, str]:
        return namespace_labels(self._handle.lister(NAMESPACES), namespace)

    def _matches_all(self, terms: tuple[Any, ...], other: Pod) -> bool:
        return matches_all_terms(terms, other, self._labels_of_namespace(other.namespace))

    def after_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        original, modified = as_view(old, Pod), as_view(new, Pod)
        if original is not None and modified is not None and modified.uid == pod.uid:
            # The pending pod's own labels changed: another pod's anti-affinity may no longer
            # repel it.
            return QUEUE
        if (modified is not None and not _placed(modified)) or (
            original is not None and not _placed(original)
        ):
            return QUEUE_SKIP  # only pods on nodes, or nominated to them, take part
        affinity = required_affinity_terms(pod)
        anti = required_anti_affinity_terms(pod)
        if original is not None and modified is not None:
            if not self._matches_all(affinity, original) and self._matches_all(affinity, modified):
                return QUEUE
            if self._matches_all(anti, original) and not self._matches_all(anti, modified):
                return QUEUE
            return QUEUE_SKIP
        if modified is not None:
            return QUEUE if self._matches_all(affinity, modified) else QUEUE_SKIP
        if original is None:
            return QUEUE
        # Deleted.
        if self._matches_all(anti, original):
            return QUEUE
        own_labels = self._labels_of_namespace(pod.namespace)
        for term in required_anti_affinity_terms(original):
            if term.matches_pod(pod.namespace, pod.labels, own_labels):
                return QUEUE
        if self._matches_all(affinity, original) and matches_all_terms(affinity, pod, own_labels):
            return QUEUE
        return QUEUE_SKIP

    def after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        original, modified = as_view(old, Node), as_view(new, Node)
        if modified is None:
            return QUEUE
        affinity = required_affinity_terms(pod)
        anti = required_anti_affinity_terms(pod)
        for term in affinity:
            after = modified.labels.get(term.topology_key)
            if after is None:
                continue
            if original is None or original.labels.get(term.topology_key) != after:
                return QUEUE  # a node joins a domain of the affinity key
        if original is None:
            # A fresh node may lie outside every domain the anti-affinity rules out.
            return QUEUE if anti or not affinity else QUEUE_SKIP
        for term in anti:
            before = original.labels.get(term.topology_key)
            if before is not None and modified.labels.get(term.topology_key) != before:
                return QUEUE  # a node leaves a domain the anti-affinity ruled out
        if not affinity and original.labels != modified.labels:
            return QUEUE  # existing pods' anti-affinity may no longer cover the node
        return QUEUE_SKIP


def _placed(pod: Pod) -> bool:
    return bool(pod.node_name or pod.nominated_node_name)
