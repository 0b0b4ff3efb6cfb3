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
