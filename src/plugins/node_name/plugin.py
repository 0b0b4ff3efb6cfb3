"""NodeName: a pod with spec.nodeName fits only the node of that name."""

from __future__ import annotations

import numpy as np

from plugins.helpers import filter_on_node
from plugins.helpers.plugin_bases import NoArgsPlugin
from plugins.helpers.signatures import NODE_NAME
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterBatch
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import SignFragments
from scheduler.framework import Status

REASON = "node(s) didn't match the requested node name"


class NodeName(NoArgsPlugin):
    name = "NodeName"

    @filter_on_node
    def filter(self, state: CycleState, pod: Pod, node: Node) -> Status:
        if not pod.node_name or pod.node_name == node.name:
            return SUCCESS
        return Status.unresolvable(REASON)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        if not pod.node_name:
            return FilterBatch.all_pass(len(rows))
        target = table.row_of(pod.node_name)
        if target is None:
            rejected = np.ones(len(rows), dtype=np.bool_)
        else:
            rejected = np.not_equal(rows, target)
        return FilterBatch.reject_where(rejected, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON)

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # A pod naming its node fits only there; every other pod fits anywhere.
        return {NODE_NAME: pod.node_name}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Only a new node can carry the requested name; no hint, so every Add requeues.
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]
