"""The shape shared by the scoring strategies, and the weighted average LeastAllocated and
MostAllocated both end with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.int64]
Vector = npt.NDArray[np.int64]


class ResourceScorer(Protocol):
    """Scores a node from per-resource requested (with the pod) and allocatable amounts.

    Entries whose allocatable is 0 are skipped. `score` and `score_rows` must agree exactly;
    `score_rows` works on (rows x resources) matrices.
    """

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int: ...

    def score_rows(self, requested: Matrix, allocatable: Matrix) -> Vector: ...


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


def weighted_floor_average_rows(scores: Matrix, allocatable: Matrix, weights: Vector) -> Vector:
    counted = allocatable != 0
    total = np.where(counted, scores * weights, 0).sum(axis=1)
    weight_sum = np.where(counted, weights, 0).sum(axis=1)
    averaged: Vector = np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0)
    return averaged.astype(np.int64)
