"""The fit check over many table rows at once: one array comparison per requested resource.

Each row's set of failed checks is a bit pattern; distinct patterns (few in practice) become the
batch's reason tuples, so reasons are built once per pattern instead of once per node.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from plugins.node_resources_fit.fits import (
    TOO_MANY_PODS,
    IgnoredResources,
    checked_resources,
    insufficient_reason,
)
from plugins.node_resources_fit.requests import PodResourceRequest
from scheduler.framework import Code, FilterBatch, NodeTable, Rows

BoolMatrix = npt.NDArray[np.bool_]

_MAX_PACKED_CHECKS = 62


def _column(
    table: NodeTable, matrix: npt.NDArray[np.int64], resource: str, rows: Rows
) -> npt.NDArray[np.int64]:
    column = table.resource_column(resource)
    if column is None:
        return np.zeros(len(rows), dtype=np.int64)
    values: npt.NDArray[np.int64] = matrix[rows, column]
    return values


def filter_rows(
    request: PodResourceRequest, table: NodeTable, rows: Rows, ignored: IgnoredResources
) -> FilterBatch:
    count = len(rows)
    reasons = [TOO_MANY_PODS]
    failed = [table.pod_count[rows] + 1 > table.allowed_pods[rows]]
    unresolvable = np.zeros(count, dtype=np.bool_)
    if not request.is_empty:
        for name, quantity in checked_resources(request, ignored):
            capacity = _column(table, table.allocatable, name, rows)
            in_use = _column(table, table.requested, name, rows)
            short = quantity > capacity - in_use
            reasons.append(insufficient_reason(name))
            failed.append(short)
            unresolvable |= short & (quantity > capacity)
    matrix: BoolMatrix = np.stack(failed, axis=1)
    rejected = matrix.any(axis=1)
    if not rejected.any():
        return FilterBatch.all_pass(count)
    codes = np.where(
        rejected,
        np.where(
            unresolvable, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), np.int8(Code.UNSCHEDULABLE)
        ),
        np.int8(0),
    ).astype(np.int8)
    patterns, inverse = _distinct_patterns(matrix[rejected])
    reason_ids = np.zeros(count, dtype=np.int32)
    reason_ids[rejected] = inverse
    tuples = [tuple(r for r, hit in zip(reasons, p, strict=True) if hit) for p in patterns]
    return FilterBatch(codes, tuples, reason_ids)


def _distinct_patterns(
    failed: BoolMatrix,
) -> tuple[list[list[bool]], npt.NDArray[np.int32]]:
    """Distinct rows of `failed` and, for each row, the index of its pattern."""
    width = failed.shape[1]
    if width <= _MAX_PACKED_CHECKS:
        # Packing each row into one integer makes this a 1-D unique, much cheaper than axis=0.
        bits = np.left_shift(np.int64(1), np.arange(width, dtype=np.int64))
        packed = failed.astype(np.int64) @ bits
        keys, inverse = np.unique(packed, return_inverse=True)
        patterns = [[bool(key >> j & 1) for j in range(width)] for key in keys.tolist()]
    else:
        rows, inverse = np.unique(failed, axis=0, return_inverse=True)
        patterns = [[bool(hit) for hit in row] for row in rows]
    return patterns, inverse.reshape(-1).astype(np.int32)
