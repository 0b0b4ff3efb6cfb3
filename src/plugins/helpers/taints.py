"""Taint checks shared by TaintToleration, NodeUnschedulable and spreading plugins, and the
cluster events that can lift a rejection by taints.

Taints are interned per distinct set in the node table, so a pod's tolerations are checked
once per taint set and the answer is gathered to rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import EventResource
from scheduler.framework import NodeTable
from scheduler.framework import QueueingHintFn
from scheduler.framework import Rows
from scheduler.objects.taints import NO_EXECUTE
from scheduler.objects.taints import NO_SCHEDULE
from scheduler.objects.taints import PREFER_NO_SCHEDULE
from scheduler.objects.taints import Taint
from scheduler.objects.taints import Toleration
from scheduler.objects.taints import first_untolerated
from scheduler.objects.taints import tolerated

# Effects that keep a pod off a node (upstream's DoNotScheduleTaintsFilterFunc).
DO_NOT_SCHEDULE_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})


def untolerated_rows(
    table: NodeTable,
    rows: Rows,
    tolerations: tuple[Toleration, ...],
    effects: frozenset[str],
    *,
    comparisons: bool = False,
) -> npt.NDArray[np.bool_]:
    """For each row, whether its node has a taint with one of `effects` not tolerated
    (`comparisons`: tolerations may compare with Lt and Gt)."""

    def has_untolerated(taints: tuple[Taint, ...]) -> bool:
        return first_untolerated(taints, tolerations, effects, comparisons=comparisons) is not None

    key = ("untolerated", effects, tolerations, comparisons)
    per_set = table.per_taint_set(key, has_untolerated)
    if not per_set.any():
        # The common case (no taint this pod minds anywhere): no per-row gather at all.
        return np.zeros(len(rows), dtype=np.bool_)
    result: npt.NDArray[np.bool_] = per_set.astype(np.bool_)[table.gather(table.taint_set_id, rows)]
    return result


def prefer_no_schedule_tolerations(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    """Tolerations that can tolerate a PreferNoSchedule taint (an empty effect means all)."""
    return tuple(t for t in tolerations if t.effect in ("", PREFER_NO_SCHEDULE))


def count_intolerable_prefer_no_schedule(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], *, comparisons: bool = False
) -> int:
    """How many PreferNoSchedule taints none of `tolerations` tolerates."""
    return sum(
        1
        for t in taints
        if t.effect == PREFER_NO_SCHEDULE and not tolerated(t, tolerations, comparisons=comparisons)
    )


def taint_events(
    after_node_change: QueueingHintFn, after_toleration_change: QueueingHintFn
) -> list[ClusterEventWithHint]:
    """The events that can lift a rejection by a node's taints: a node added or its taints
    changed (upstream counts a change of spec.unschedulable as one), or a pod's tolerations
    changed."""
    return [
        ClusterEventWithHint(
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
            after_node_change,
        ),
        ClusterEventWithHint(
            ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATIONS),
            after_toleration_change,
        ),
    ]
