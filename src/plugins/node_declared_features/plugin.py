"""NodeDeclaredFeatures: a pod that needs a newer node feature goes only to nodes that declare
it (`status.declaredFeatures`), so that no kubelet runs a pod it does not understand."""

from __future__ import annotations

from dataclasses import dataclass

from plugins.helpers import node_change
from plugins.helpers import pod_change
from plugins.helpers.plugin_bases import NoArgsPlugin
from plugins.helpers.signatures import FEATURES
from plugins.node_declared_features.requirements import Requirements
from plugins.node_declared_features.requirements import required_features
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PreFilterExtensions
from scheduler.framework import PreFilterResult
from scheduler.framework import QueueingHint
from scheduler.framework import SignFragments
from scheduler.framework import Status

REASON = "node(s) didn't match Pod's required features"

PRE_FILTER_STATE_KEY = "PreFilterNodeDeclaredFeatures"


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The features the pod needs; never empty (PreFilter skips the plugin otherwise)."""

    required: Requirements


class NodeDeclaredFeatures(NoArgsPlugin):
    name = "NodeDeclaredFeatures"

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        required = required_features(pod.raw.get("spec") or {})
        if not required:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(required))
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        found = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if found is None:
            return Status.missing_state(PRE_FILTER_STATE_KEY)
        node = node_info.node
        declared = set(node.declared_features) if node is not None else set()
        if declared.issuperset(found.required):
            return SUCCESS
        # No preemption can give a node a feature its kubelet lacks.
        return Status.unresolvable(REASON)

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Filter reads only the features the pod needs (sorted names).
        return {FEATURES: required_features(pod.raw.get("spec") or {})}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE
                ),
                is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE), is_schedulable_after_pod_update
            ),
        ]


def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue for a new node, or a node whose declared features changed."""
    before, after = node_change(old, new)
    if before is not None and before.declared_features == after.declared_features:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def is_schedulable_after_pod_update(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the rejected pod itself changed what it needs."""
    before, after = pod_change(old, new)
    if after.uid != pod.uid or before is None:
        return QueueingHint.QUEUE_SKIP
    if required_features(before.raw.get("spec") or {}) == required_features(
        after.raw.get("spec") or {}
    ):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE
