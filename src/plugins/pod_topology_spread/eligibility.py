"""Which nodes count as topology domains for a constraint (node inclusion policies).

nodeAffinityPolicy Honor counts only nodes matching the incoming pod's nodeSelector and
required node affinity; nodeTaintsPolicy Honor counts only nodes without a NoSchedule or
NoExecute taint the pod does not tolerate. Ignore counts every node. Each mask is computed once
per cycle, over all rows, and only if some constraint asks for it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from plugins.helpers import DO_NOT_SCHEDULE_EFFECTS
from plugins.helpers import RequiredNodeAffinity
from plugins.helpers import untolerated_rows
from plugins.pod_topology_spread.constraints import SpreadConstraint
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.objects.taints import first_untolerated

BoolArray = npt.NDArray[np.bool_]


class RowInclusion:
    """Inclusion masks over every row of the table, for one incoming pod."""

    __slots__ = ("_affinity", "_comparisons", "_pod", "_table", "_taints")

    def __init__(self, pod: Pod, table: NodeTable, *, comparisons: bool = False) -> None:
        """`comparisons`: the pod's tolerations may compare with Lt and Gt."""
        self._pod = pod
        self._table = table
        self._comparisons = comparisons
        self._affinity: BoolArray | None = None
        self._taints: BoolArray | None = None

    def mask(self, constraint: SpreadConstraint) -> BoolArray | None:
        """Rows the constraint's policies let count; None when they let every row count."""
        result: BoolArray | None = None
        if constraint.honor_node_affinity:
            result = self._affinity_mask()
        if constraint.honor_node_taints:
            taints = self._taint_mask()
            result = taints if result is None else result & taints
        return result

    def _affinity_mask(self) -> BoolArray | None:
        required = RequiredNodeAffinity.of_pod(self._pod)
        if required.is_empty:
            return None
        if self._affinity is None:
            self._affinity = required.match_rows(self._table)
        return self._affinity

    def _taint_mask(self) -> BoolArray:
        if self._taints is None:
            table = self._table
            untolerated = untolerated_rows(
                table,
                table.all_rows(),
                self._pod.tolerations,
                DO_NOT_SCHEDULE_EFFECTS,
                comparisons=self._comparisons,
            )
            self._taints = ~untolerated
        return self._taints


class NodeInclusion:
    """The same policies for one node at a time (AddPod/RemovePod and the per-node forms)."""

    __slots__ = ("_comparisons", "_pod", "_required")

    def __init__(self, pod: Pod, *, comparisons: bool = False) -> None:
        self._pod = pod
        self._comparisons = comparisons
        self._required: RequiredNodeAffinity | None = None

    def includes(self, constraint: SpreadConstraint, node: Node) -> bool:
        if constraint.honor_node_affinity:
            if self._required is None:
                self._required = RequiredNodeAffinity.of_pod(self._pod)
            if not self._required.matches(node):
                return False
        if constraint.honor_node_taints:
            untolerated = first_untolerated(
                node.taints,
                self._pod.tolerations,
                DO_NOT_SCHEDULE_EFFECTS,
                comparisons=self._comparisons,
            )
            if untolerated is not None:
                return False
        return True
