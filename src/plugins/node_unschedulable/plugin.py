"""NodeUnschedulable: filters out cordoned nodes (spec.unschedulable) unless tolerated."""

from __future__ import annotations

import numpy as np

from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from plugins.helpers import taint_events
from plugins.node_unschedulable.hints import is_schedulable_after_node_change
from plugins.node_unschedulable.hints import is_schedulable_after_toleration_change
from plugins.node_unschedulable.tolerance import tolerates_unschedulable
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import FilterBatch
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import PluginArgs
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import Status

REASON = "node(s) were unschedulable"


class NodeUnschedulable:
    name = "NodeUnschedulable"

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args, handle

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return Status.from_error(NODE_NOT_FOUND_MESSAGE)
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

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return taint_events(
            is_schedulable_after_node_change, is_schedulable_after_toleration_change
        )
