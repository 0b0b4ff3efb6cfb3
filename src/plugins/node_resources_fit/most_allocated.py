"""MostAllocated: favour the fullest nodes (bin packing).

Per resource: min(requested, allocatable) * 100 // allocatable (requested may exceed allocatable
because pods without requests count the 100m / 200Mi defaults); the node score is the weighted
average, rounded down.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from plugins.helpers.resources.allocation import ScoredColumn
from plugins.node_resources_fit.scorer import Vector
from plugins.node_resources_fit.scorer import weighted_floor_average
from plugins.node_resources_fit.scorer import weighted_floor_average_columns
from scheduler.framework import MAX_NODE_SCORE


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


class MostAllocatedScorer:
    def __init__(self, weights: Sequence[int]) -> None:
        self._weights = tuple(weights)
        self._weight_vector = np.asarray(weights, dtype=np.int64)

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        scores = [most_requested_score(r, a) for r, a in zip(requested, allocatable, strict=True)]
        return weighted_floor_average(scores, allocatable, self._weights)

    def score_columns(self, columns: Sequence[ScoredColumn], count: int) -> Vector:
        return weighted_floor_average_columns(
            [(column, most_requested_column(column)) for column in columns], self._weights, count
        )


def most_requested_column(column: ScoredColumn) -> Vector:
    """`most_requested_score` of every row (meaningless where allocatable is 0)."""
    used = column.allocated + column.pod_request
    np.minimum(used, column.allocatable, out=used)
    used *= MAX_NODE_SCORE
    np.floor_divide(used, column.divisor(), out=used)
    return used
