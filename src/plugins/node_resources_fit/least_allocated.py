"""LeastAllocated: favour nodes with the most room left after placing the pod.

Per resource: (allocatable - requested) * 100 // allocatable, or 0 when requested exceeds
allocatable; the node score is the weighted average, rounded down.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from plugins.helpers.resources.allocation import ScoredColumn
from plugins.node_resources_fit.scorer import PerResourceScorer
from plugins.node_resources_fit.scorer import Vector
from scheduler.framework import MAX_NODE_SCORE


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def least_requested_column(column: ScoredColumn) -> Vector:
    """`least_requested_score` of every row (meaningless where allocatable is 0)."""
    # Room left after placing the pod; a negative room (requested > allocatable) scores 0.
    free = column.allocatable - column.allocated
    free -= column.pod_request
    np.maximum(free, 0, out=free)
    free *= MAX_NODE_SCORE
    np.floor_divide(free, column.divisor(), out=free)
    return free


def least_allocated_scorer(weights: Sequence[int]) -> PerResourceScorer:
    return PerResourceScorer(weights, least_requested_score, least_requested_column)
