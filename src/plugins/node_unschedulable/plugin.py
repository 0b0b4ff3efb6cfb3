"""NodeUnschedulable: filters out cordoned nodes (spec.unschedulable) unless tolerated."""

from __future__ import annotations

import numpy as np

from plugins.helpers import filter_on_node
from plugins.helpers import taint_events
from plugins.helpers.plugin_bases import NoArgsPlugin
from plugins.helpers.signatures import tolerations_fragments
from plugins.node_unschedulable.hints import is_schedulable_after_node_change
from plugins.node_unschedulable.hints import is_schedulable_after_toleration_change
from plugins.node_unschedulable.tolerance import tolerates_unschedulable
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import FilterBatch
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import SignFragments
from scheduler.framework import Status

REASON = "node(s) were unschedulable"


class NodeUnschedulable(NoArgsPlugin):
    name = "NodeUnschedulable"

    @filter_on_node
    def filter(self, state: CycleState, pod: Pod, node: Node) -> Status:
        if not node.unschedulable or tolerates_unschedulable(pod):
            return SUCCESS
        return Status.unresolvable(REASON)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        if tolerates_unschedulable(pod):
            return FilterBatch.all_pass(len(rows))
        rejected = np.asarray(table.gather(table.unschedulable, rows), dtype=np.bool_)
        return FilterBatch.reject_where(rejected, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON)

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Only a toleration of the unschedulable taint lets the pod onto a cordoned node.
        return tolerations_fragments(pod)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return taint_events(
            is_schedulable_after_node_change, is_schedulable_after_toleration_change
        )
