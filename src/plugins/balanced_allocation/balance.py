"""How balanced a node's resource usage is, and how much the incoming pod improves it.

Balance of a usage vector: every resource the node offers gives a fraction requested /
allocatable, capped at 1; std is their population standard deviation (|f1 - f2| / 2 for two);
balance = int((1 - std) * 100), which lies in [50, 100].

The node score (kube-scheduler v1.36) rewards the change the pod makes:
    50 + (50 + balance(with pod) - balance(without pod)) / 2      (integer arithmetic)
so an unchanged balance scores 75, balanced -> unbalanced 50, unbalanced -> balanced 100.

The float operations follow upstream's order exactly (sequential sums, then one division), and
the row forms (here over matrices, in balance_columns over table columns) repeat them column by
column, so all forms give bit-identical results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework import MAX_NODE_SCORE

Matrix = npt.NDArray[np.int64]
Vector = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

HALF_SCORE = MAX_NODE_SCORE // 2


def balance(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    fractions = [
        min(float(r) / float(capacity), 1.0)
        for r, capacity in zip(requested, allocatable, strict=True)
        if capacity != 0
    ]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = 0.0
        for fraction in fractions:
            total += fraction
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares = squares + (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


def _truncating_half(value: int) -> int:
    """value / 2 rounded toward zero, as Go's integer division."""
    return -((-value) // 2) if value < 0 else value // 2


def improvement_score(without_pod: int, with_pod: int) -> int:
    return HALF_SCORE + _truncating_half(HALF_SCORE + with_pod - without_pod)


def balanced_allocation_score(
    requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
) -> int:
    return improvement_score(balance(allocated, allocatable), balance(requested, allocatable))


def balance_rows(requested: Matrix, allocatable: Matrix) -> Vector:
    offered = allocatable != 0
    safe = np.where(offered, allocatable, 1).astype(np.float64)
    fractions: Floats = np.minimum(requested.astype(np.float64) / safe, 1.0)
    count = offered.sum(axis=1)
    rows, columns = fractions.shape
    zero = np.zeros(rows, dtype=np.float64)
    # Two offered resources: |first - second| / 2, picking them by position among the offered.
    position = np.cumsum(offered, axis=1)
    first, second, total = zero.copy(), zero.copy(), zero.copy()
    for j in range(columns):
        here = offered[:, j]
        first = first + np.where(here & (position[:, j] == 1), fractions[:, j], 0.0)
        second = second + np.where(here & (position[:, j] == 2), fractions[:, j], 0.0)
        total = total + np.where(here, fractions[:, j], 0.0)
    safe_count = np.maximum(count, 1).astype(np.float64)
    mean = total / safe_count
    squares = zero.copy()
    for j in range(columns):
        deviation = fractions[:, j] - mean
        squares = squares + np.where(offered[:, j], deviation * deviation, 0.0)
    std = np.where(
        count == 2,
        np.abs((first - second) / 2),
        np.where(count > 2, np.sqrt(squares / safe_count), 0.0),
    )
    scores: Vector = ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    return scores


def balanced_allocation_score_rows(
    requested: Matrix, allocated: Matrix, allocatable: Matrix
) -> Vector:
    change = (
        HALF_SCORE + balance_rows(requested, allocatable) - balance_rows(allocated, allocatable)
    )
    # Go's integer division truncates toward zero; the change is never below -1 in practice.
    halved = np.where(change < 0, -((-change) // 2), change // 2)
    result: Vector = (HALF_SCORE + halved).astype(np.int64)
    return result
