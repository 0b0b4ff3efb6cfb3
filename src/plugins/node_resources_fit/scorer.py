"""The shape shared by the scoring strategies, and the per-resource scorer LeastAllocated and
MostAllocated both are: score each resource alone, then take the weighted average."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from plugins.helpers.resources.allocation import ScoredColumn

Matrix = npt.NDArray[np.int64]
Vector = npt.NDArray[np.int64]


class ResourceScorer(Protocol):
    """Scores a node from per-resource requested (with the pod) and allocatable amounts.

    Entries whose allocatable is 0 are skipped. `score` and `score_columns` must agree exactly;
    `score_columns` works on the scored resources' columns (what the batch Score form uses: it
    reads nothing else).
    """

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int: ...

    def score_columns(self, columns: Sequence[ScoredColumn], count: int) -> Vector: ...


class PerResourceScorer:
    """Scores each resource on its own and averages by weight, rounding down.

    `resource_score(requested, allocatable)` scores one resource of one node;
    `resource_column(column)` is its row form, which must agree with it exactly (its value
    where allocatable is 0 does not matter: such entries are skipped).
    """

    def __init__(
        self,
        weights: Sequence[int],
        resource_score: Callable[[int, int], int],
        resource_column: Callable[[ScoredColumn], Vector],
    ) -> None:
        self._weights = tuple(weights)
        self._resource_score = resource_score
        self._resource_column = resource_column

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        scores = [self._resource_score(r, a) for r, a in zip(requested, allocatable, strict=True)]
        return weighted_floor_average(scores, allocatable, self._weights)

    def score_columns(self, columns: Sequence[ScoredColumn], count: int) -> Vector:
        return weighted_floor_average_columns(
            [(column, self._resource_column(column)) for column in columns], self._weights, count
        )


def weighted_floor_average(
    scores: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
) -> int:
    """sum(score x weight) // sum(weight) over resources the node offers; 0 if it offers none."""
    total = weight_sum = 0
    for score, capacity, weight in zip(scores, allocatable, weights, strict=True):
        if capacity == 0:
            continue
        total += score * weight
        weight_sum += weight
    return total // weight_sum if weight_sum else 0


def weighted_floor_average_columns(
    scored: Sequence[tuple[ScoredColumn, Vector]], weights: Sequence[int], count: int
) -> Vector:
    """The row form of `weighted_floor_average` over per-resource score columns.

    Takes ownership of the score arrays (they are updated in place).
    """
    if not scored:
        return np.zeros(count, dtype=np.int64)
    if all(column.offered_everywhere for column, _ in scored):
        # Every row counts every resource: one weight sum for all rows, no masks.
        weight_sum = sum(weights[column.position] for column, _ in scored)
        if weight_sum <= 0:
            return np.zeros(count, dtype=np.int64)
        total: Vector | None = None
        for column, scores in scored:
            weight = weights[column.position]
            if weight != 1:
                np.multiply(scores, weight, out=scores)
            total = scores if total is None else np.add(total, scores, out=total)
        assert total is not None
        if (weight_sum & (weight_sum - 1)) == 0:
            # An arithmetic shift is floor division by a power of two, negatives included.
            return np.right_shift(total, weight_sum.bit_length() - 1, out=total)
        return np.floor_divide(total, weight_sum, out=total)
    total = np.zeros(count, dtype=np.int64)
    row_weights = np.zeros(count, dtype=np.int64)
    for column, scores in scored:
        weight = weights[column.position]
        counted = column.offered()
        np.multiply(scores, weight, out=scores)
        total += np.where(counted, scores, 0)
        row_weights += np.where(counted, weight, 0)
    averaged: Vector = np.where(row_weights > 0, total // np.maximum(row_weights, 1), 0)
    return averaged
