"""MostAllocated: favour the fullest nodes (bin packing).

Per resource: min(requested, allocatable) * 100 // allocatable (requested may exceed allocatable
because pods without requests count the 100m / 200Mi defaults); the node score is the weighted
average, rounded down.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from plugins.helpers.resources.allocation import ScoredColumn
from plugins.node_resources_fit.scorer import PerResourceScorer
from plugins.node_resources_fit.scorer import Vector
from scheduler.framework import MAX_NODE_SCORE


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def most_requested_column(column: ScoredColumn) -> Vector:
    """`most_requested_score` of every row (meaningless where allocatable is 0)."""
    used = column.allocated + column.pod_request
    np.minimum(used, column.allocatable, out=used)
    used *= MAX_NODE_SCORE
    np.floor_divide(used, column.divisor(), out=used)
    return used


def most_allocated_scorer(weights: Sequence[int]) -> PerResourceScorer:
    return PerResourceScorer(weights, most_requested_score, most_requested_column)
