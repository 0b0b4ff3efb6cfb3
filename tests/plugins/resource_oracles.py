"""Reference forms of the resource scorers over (rows x resources) matrices.

Production scores rows through per-resource columns (`score_columns`); these matrix forms
compute the same scores another way, all rows and resources at once, so property tests can
hold the column forms to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from plugins.balanced_allocation.balance import HALF_SCORE
from plugins.helpers.resources.allocation import scored
from plugins.helpers.resources.shape import MAX_UTILIZATION
from plugins.helpers.resources.shape import broken_linear
from plugins.helpers.resources.shape import scaled_shape
from plugins.node_resources_fit.args import LEAST_ALLOCATED
from plugins.node_resources_fit.args import MOST_ALLOCATED
from plugins.node_resources_fit.args import ScoringStrategy
from scheduler.framework import MAX_NODE_SCORE
from scheduler.framework import NodeTable
from scheduler.framework import Rows
from scheduler.objects.resources import CPU
from scheduler.objects.resources import MEMORY

Matrix = npt.NDArray[np.int64]
Vector = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class RowsAllocation:
    """(rows x scored resources) matrices over table rows."""

    allocatable: Matrix
    allocated: Matrix
    requested: Matrix


def rows_allocation(
    table: NodeTable,
    rows: Rows,
    names: Sequence[str],
    pod_requests: Sequence[int],
    *,
    use_requested: bool,
) -> RowsAllocation:
    shape = (len(rows), len(names))
    allocatable = np.zeros(shape, dtype=np.int64)
    allocated = np.zeros(shape, dtype=np.int64)
    for j, (name, pod_request) in enumerate(zip(names, pod_requests, strict=True)):
        column = table.resource_column(name)
        if column is None or not scored(name, pod_request):
            continue
        allocatable[:, j] = table.allocatable[rows, column]
        if name == CPU and not use_requested:
            allocated[:, j] = table.non_zero_requested[rows, 0]
        elif name == MEMORY and not use_requested:
            allocated[:, j] = table.non_zero_requested[rows, 1]
        else:
            allocated[:, j] = table.requested[rows, column]
    offered = allocatable != 0
    allocated = np.where(offered, allocated, 0)
    requested = np.where(offered, allocated + np.asarray(pod_requests, dtype=np.int64), 0)
    return RowsAllocation(allocatable, allocated, requested)


def score_rows(strategy: ScoringStrategy, requested: Matrix, allocatable: Matrix) -> Vector:
    """NodeResourcesFit's score of every row under `strategy`."""
    weights = np.asarray([resource.weight for resource in strategy.resources], dtype=np.int64)
    safe = np.where(allocatable == 0, 1, allocatable)
    if strategy.type == LEAST_ALLOCATED:
        free = (allocatable - requested) * MAX_NODE_SCORE // safe
        scores = np.where((allocatable == 0) | (requested > allocatable), 0, free)
        return weighted_floor_average_rows(scores, allocatable, weights)
    if strategy.type == MOST_ALLOCATED:
        used = np.minimum(requested, allocatable) * MAX_NODE_SCORE // safe
        scores = np.where(allocatable == 0, 0, used)
        return weighted_floor_average_rows(scores, allocatable, weights)
    shape = scaled_shape(strategy.shape)
    by_utilization = np.asarray(
        [broken_linear(shape, u) for u in range(MAX_UTILIZATION + 1)], dtype=np.int64
    )
    offered = allocatable != 0
    used = np.where(requested > allocatable, MAX_UTILIZATION, requested * MAX_UTILIZATION // safe)
    scores = by_utilization[np.where(offered, used, 0)]
    counted = offered & (scores > 0)
    total = np.where(counted, scores * weights, 0).sum(axis=1)
    weight_sum = np.where(counted, weights, 0).sum(axis=1)
    mean = total.astype(np.float64) / np.maximum(weight_sum, 1).astype(np.float64)
    floor = np.floor(mean)
    rounded = floor + (mean - floor >= 0.5)
    result: Vector = np.where(weight_sum > 0, rounded, 0).astype(np.int64)
    return result


def weighted_floor_average_rows(scores: Matrix, allocatable: Matrix, weights: Vector) -> Vector:
    counted = allocatable != 0
    total = np.where(counted, scores * weights, 0).sum(axis=1)
    weight_sum = np.where(counted, weights, 0).sum(axis=1)
    averaged: Vector = np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0)
    return averaged.astype(np.int64)


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
