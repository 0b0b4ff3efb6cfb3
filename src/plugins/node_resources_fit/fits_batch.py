"""The fit check over many table rows at once: one array comparison per requested resource.

Only the columns of the resources the pod requests are read (views of the table when the rows
are the whole table). When no row fails, which is the common case, that is all the work; the
reasons are assembled only for rows that fail. Each failing row's set of failed checks is a bit
pattern; distinct patterns (few in practice) become the batch's reason tuples, so reasons are
built once per pattern instead of once per node.

`filter_rows_remembered` keeps each row's failed checks across cycles (a `RowMemo` keyed by
the checked quantities), so replicas asking for the same resources re-check only the rows whose
usage or allocatable changed since the last pod; `_rejections_of_packed` turns those bits into
the same batch the one-pass check builds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from plugins.helpers.resources.allocation import FEW_REFRESHED_ROWS
from plugins.helpers.resources.row_columns import RowColumns
from plugins.helpers.resources.row_columns import Vector
from plugins.helpers.row_memo import RowMemo
from plugins.node_resources_fit.fits import TOO_MANY_PODS
from plugins.node_resources_fit.fits import IgnoredResources
from plugins.node_resources_fit.fits import checked_resources
from plugins.node_resources_fit.fits import insufficient_reason
from plugins.node_resources_fit.requests import PodResourceRequest
from scheduler.framework import Code
from scheduler.framework import FilterBatch
from scheduler.framework import NodeTable
from scheduler.framework import Rows

Packed = npt.NDArray[np.int64]

BoolMatrix = npt.NDArray[np.bool_]
BoolVector = npt.NDArray[np.bool_]

_MAX_PACKED_CHECKS = 62
# Packed patterns below this bound are told apart with one bincount instead of a sort.
_COUNTED_PATTERNS = 1 << 12
# So few rejected rows are grouped faster in plain Python than with array calls.
_FEW_ROWS = 64
_UNSCHEDULABLE = np.int8(Code.UNSCHEDULABLE)


@dataclass(slots=True)
class _Check:
    reason: str
    short: BoolVector
    failed_somewhere: bool
    # For resource checks: the request and the rows' allocatable (None: no such column).
    quantity: int = 0
    capacity: Vector | None = None


def _resource_check(
    columns: RowColumns, table: NodeTable, name: str, quantity: int, device_backed: bool
) -> _Check:
    column = table.resource_column(name)
    if column is None:
        # No node offers the resource: it reads 0 allocatable and 0 in use everywhere, and is
        # left to DynamicResources everywhere if a DeviceClass provides it.
        short = np.full(columns.count, quantity > 0 and not device_backed, dtype=np.bool_)
        return _Check(insufficient_reason(name), short, bool(short.any()), quantity)
    capacity = columns.allocatable(column)
    free = capacity - columns.requested(column)
    short = np.less(free, quantity)
    if device_backed:
        short &= capacity > 0
    return _Check(insufficient_reason(name), short, bool(short.any()), quantity, capacity)


def filter_rows(
    request: PodResourceRequest, table: NodeTable, rows: Rows, ignored: IgnoredResources
) -> FilterBatch:
    columns = RowColumns(table, rows)
    count = columns.count
    # pods + 1 > allowed, for integers.
    too_many = np.greater_equal(columns.pod_count(), columns.allowed_pods())
    checks = [_Check(TOO_MANY_PODS, too_many, bool(too_many.any()))]
    if not request.is_empty:
        checks.extend(
            _resource_check(columns, table, name, quantity, name in request.device_backed)
            for name, quantity in checked_resources(request, ignored)
        )
    if not any(check.failed_somewhere for check in checks):
        return FilterBatch.all_pass(count)
    return _rejections(checks, count)


def filter_rows_remembered(
    request: PodResourceRequest,
    table: NodeTable,
    rows: Rows,
    ignored: IgnoredResources,
    memo: RowMemo,
) -> FilterBatch:
    """`filter_rows`, from each row's failed checks remembered in `memo` across cycles."""
    resources = [] if request.is_empty else checked_resources(request, ignored)
    if len(resources) + 1 > _MAX_PACKED_CHECKS:
        return filter_rows(request, table, rows, ignored)

    backed = request.device_backed

    def compute(some: Rows) -> Packed:
        if len(some) <= FEW_REFRESHED_ROWS:
            return _failed_checks_of_few(table, some, resources, backed)
        return _failed_checks(RowColumns(table, some), table, resources, backed)

    remembered: Packed = memo.values(table, (tuple(resources), backed), compute)
    every_row = table.covers(rows)
    failed = remembered if every_row else remembered[rows]
    if not failed.any():
        return FilterBatch.all_pass(len(rows))
    return _rejections_of_packed(failed, rows, every_row, table, resources)


def _failed_checks(
    columns: RowColumns,
    table: NodeTable,
    resources: list[tuple[str, int]],
    device_backed: frozenset[str],
) -> Packed:
    """Per row, bit 0 set for too many pods and bit i for the i-th checked resource short.
    A resource a DeviceClass provides is never short where none of it is allocatable."""
    failed = np.greater_equal(columns.pod_count(), columns.allowed_pods()).astype(np.int64)
    for bit, (name, quantity) in enumerate(resources, start=1):
        column = table.resource_column(name)
        if column is None:
            # No node offers the resource: it reads 0 allocatable and 0 in use everywhere.
            if quantity > 0 and name not in device_backed:
                failed |= 1 << bit
            continue
        allocatable = columns.allocatable(column)
        short = np.less(allocatable - columns.requested(column), quantity)
        if name in device_backed:
            short &= allocatable > 0
        failed |= short.astype(np.int64) << bit
    return failed


def _failed_checks_of_few(
    table: NodeTable,
    rows: Rows,
    resources: list[tuple[str, int]],
    device_backed: frozenset[str],
) -> Packed:
    """`_failed_checks` row by row in plain integers: for the few rows a memo refreshes, this
    is cheaper than array calls. Usage and allocatable are non-negative int64 values, so the
    differences below are exact in both forms and the answers agree."""
    columns = [
        (table.resource_column(name), quantity, name in device_backed)
        for name, quantity in resources
    ]
    failed = []
    for row in rows.tolist():
        bits = int(table.pod_count[row] >= table.allowed_pods[row])
        allocatable = table.allocatable[row].tolist()
        requested = table.requested[row].tolist()
        for bit, (column, quantity, backed) in enumerate(columns, start=1):
            capacity = 0 if column is None else allocatable[column]
            if backed and capacity <= 0:
                continue
            free = 0 if column is None else capacity - requested[column]
            if free < quantity:
                bits |= 1 << bit
        failed.append(bits)
    return np.array(failed, dtype=np.int64)


def _rejections_of_packed(
    failed: Packed,
    rows: Rows,
    every_row: bool,
    table: NodeTable,
    resources: list[tuple[str, int]],
) -> FilterBatch:
    """The batch `_rejections` builds, from each row's packed failed checks."""
    at = np.flatnonzero(failed)
    packed = failed[at]
    table_rows = at if every_row else rows[at]
    unresolvable = np.zeros(len(at), dtype=np.bool_)
    for bit, (name, quantity) in enumerate(resources, start=1):
        # A shortfall preemption cannot help: the request exceeds the whole allocatable.
        hit = (packed >> bit & 1).astype(np.bool_)
        column = table.resource_column(name)
        capacity = 0 if column is None else table.allocatable[table_rows, column]
        unresolvable |= hit & (quantity > capacity)
    codes = np.zeros(len(failed), dtype=np.int8)
    # Upstream's code values: UNSCHEDULABLE + 1 is UNSCHEDULABLE_AND_UNRESOLVABLE.
    codes[at] = _UNSCHEDULABLE + unresolvable
    reasons = [TOO_MANY_PODS] + [insufficient_reason(name) for name, _ in resources]
    keys, inverse = _distinct_keys(packed)
    tuples = [tuple([r for j, r in enumerate(reasons) if key >> j & 1]) for key in keys]
    reason_ids = np.zeros(len(failed), dtype=np.int32)
    reason_ids[at] = inverse
    return FilterBatch(codes, tuples, reason_ids)


def _rejections(checks: list[_Check], count: int) -> FilterBatch:
    """The batch for rows some check fails; the work past one pass is per failing row."""
    failing = [(bit, check) for bit, check in enumerate(checks) if check.failed_somewhere]
    rejected = failing[0][1].short
    for _, check in failing[1:]:
        rejected = rejected | check.short
    at = np.flatnonzero(rejected)
    # Each failing check's verdict on the rejected rows only.
    hits = [(bit, check, check.short[at]) for bit, check in failing]
    unresolvable = np.zeros(len(at), dtype=np.bool_)
    for bit, check, hit in hits:
        if bit == 0:
            continue  # too many pods: preemption can help
        beyond = check.quantity > (0 if check.capacity is None else check.capacity[at])
        unresolvable |= hit & beyond
    codes = np.zeros(count, dtype=np.int8)
    # Upstream's code values: UNSCHEDULABLE + 1 is UNSCHEDULABLE_AND_UNRESOLVABLE.
    codes[at] = _UNSCHEDULABLE + unresolvable
    reasons = [check.reason for check in checks]
    if len(checks) > _MAX_PACKED_CHECKS:
        matrix: BoolMatrix = np.stack([check.short[at] for check in checks], axis=1)
        patterns, inverse = _distinct_patterns(matrix)
        tuples = [tuple(r for r, hit in zip(reasons, p, strict=True) if hit) for p in patterns]
    else:
        packed = np.zeros(len(at), dtype=np.int64)
        for bit, _, hit in hits:
            packed |= hit.astype(np.int64) << bit
        keys, inverse = _distinct_keys(packed)
        tuples = [tuple([r for j, r in enumerate(reasons) if key >> j & 1]) for key in keys]
    reason_ids = np.zeros(count, dtype=np.int32)
    reason_ids[at] = inverse
    return FilterBatch(codes, tuples, reason_ids)


def _distinct_keys(packed: npt.NDArray[np.int64]) -> tuple[list[int], npt.NDArray[np.int32]]:
    """The distinct values of `packed` (non-negative), ascending, and each entry's index among
    them."""
    if len(packed) <= _FEW_ROWS:
        values = packed.tolist()
        keys = sorted(set(values))
        index_of = {key: i for i, key in enumerate(keys)}
        return keys, np.array([index_of[value] for value in values], dtype=np.int32)
    top = int(packed.max())
    if top < _COUNTED_PATTERNS:
        present = np.flatnonzero(np.bincount(packed))
        index = np.zeros(top + 1, dtype=np.int32)
        index[present] = np.arange(len(present), dtype=np.int32)
        return present.tolist(), index[packed]
    found, inverse = np.unique(packed, return_inverse=True)
    return found.tolist(), inverse.reshape(-1).astype(np.int32)


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
