"""RequestedToCapacityRatio: score each resource through a user-defined piecewise-linear shape.

Per resource: utilization = requested * 100 // allocatable (100 when requested exceeds it), then
the shape (scores given on 0..10, scaled x10) maps utilization to a score. Only resources with a
positive score count, weighted; the node score is their weighted mean rounded half away from
zero (Go's math.Round of a float64 quotient).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from plugins.helpers.resources.allocation import ScoredColumn
from plugins.helpers.resources.shape import MAX_UTILIZATION
from plugins.helpers.resources.shape import UtilizationShapePoint
from plugins.helpers.resources.shape import broken_linear
from plugins.helpers.resources.shape import go_round
from plugins.helpers.resources.shape import scaled_shape
from plugins.helpers.resources.shape import utilization
from plugins.node_resources_fit.scorer import Vector


class RequestedToCapacityRatioScorer:
    def __init__(self, weights: Sequence[int], shape: Sequence[UtilizationShapePoint]) -> None:
        self._weights = tuple(weights)
        self._weight_vector = np.asarray(weights, dtype=np.int64)
        self._shape = scaled_shape(shape)
        # Utilization is always an integer in 0..100, so the shape is tabulated once.
        self._by_utilization = np.asarray(
            [broken_linear(self._shape, u) for u in range(MAX_UTILIZATION + 1)], dtype=np.int64
        )

    def resource_score(self, requested: int, capacity: int) -> int:
        return broken_linear(self._shape, utilization(requested, capacity))

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weight_sum = 0
        for r, capacity, weight in zip(requested, allocatable, self._weights, strict=True):
            if capacity == 0:
                continue
            score = self.resource_score(r, capacity)
            if score > 0:
                total += score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return go_round(float(total) / float(weight_sum))

    def score_columns(self, columns: Sequence[ScoredColumn], count: int) -> Vector:
        total = np.zeros(count, dtype=np.int64)
        weight_sum = np.zeros(count, dtype=np.int64)
        for column in columns:
            scores = self._by_utilization[self._utilization_column(column)]
            counted = scores > 0
            if not column.offered_everywhere:
                counted &= column.offered()
            weight = self._weights[column.position]
            scores *= weight
            total += np.where(counted, scores, 0)
            weight_sum += np.where(counted, weight, 0)
        return _rounded_mean(total, weight_sum)

    @staticmethod
    def _utilization_column(column: ScoredColumn) -> Vector:
        """`utilization` of every row, 0 where the resource is not offered."""
        requested = column.allocated + column.pod_request
        used = requested * MAX_UTILIZATION
        np.floor_divide(used, column.divisor(), out=used)
        used[requested > column.allocatable] = MAX_UTILIZATION
        if not column.offered_everywhere:
            used[~column.offered()] = 0
        return used


def _rounded_mean(total: Vector, weight_sum: Vector) -> Vector:
    """total / weight_sum as a float64 quotient rounded half away from zero; 0 where the
    weight sum is 0."""
    mean = total.astype(np.float64) / np.maximum(weight_sum, 1).astype(np.float64)
    floor = np.floor(mean)
    rounded = floor + (mean - floor >= 0.5)
    result: Vector = np.where(weight_sum > 0, rounded, 0).astype(np.int64)
    return result
