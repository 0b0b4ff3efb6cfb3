"""The batch score over the balanced resources' table columns.

Each resource contributes a (2 x rows) array of fractions: row 0 without the pod, row 1 with it,
so both balances come out of the same operations and no (rows x resources) matrix is built.
Every float operation mirrors `balance.balance` in upstream's order:
- two fractions: |f1 - f2| / 2 (the default cpu and memory take only this path);
- more: a sequential sum, one division for the mean, a sequential sum of squared deviations,
  one division and a square root;
- fewer than two: no spread.
Rows where a resource is not offered leave the sums as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from plugins.balanced_allocation.balance import HALF_SCORE
from plugins.balanced_allocation.balance import improvement_score
from plugins.helpers.resources.allocation import ScoredColumn
from scheduler.framework import MAX_NODE_SCORE

Vector = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


def balanced_allocation_score_columns(columns: Sequence[ScoredColumn], count: int) -> Vector:
    """`balanced_allocation_score` of every row, from the balanced resources that at least one
    row offers."""
    if len(columns) < 2:
        # At most one fraction per row: no spread with or without the pod.
        unchanged = improvement_score(MAX_NODE_SCORE, MAX_NODE_SCORE)
        return np.full(count, unchanged, dtype=np.int64)
    if len(columns) == 2:
        return _scores_from_spread(_two_resource_spread(columns[0], columns[1]))
    return _scores_from_spread(_many_resource_spread(columns, count))


def _fractions(column: ScoredColumn) -> Floats:
    """(2 x rows): min(usage / allocatable, 1) without the pod (row 0) and with it (row 1)."""
    capacity = column.allocatable.astype(np.float64)
    if not column.offered_everywhere:
        capacity[capacity == 0.0] = 1.0
    pair = np.empty((2, len(capacity)), dtype=np.float64)
    pair[0] = column.allocated
    # Summed in int64 and converted once, as upstream converts the requested total.
    pair[1] = column.allocated + column.pod_request
    np.divide(pair, capacity, out=pair)
    np.minimum(pair, 1.0, out=pair)
    return pair


def _two_resource_spread(first: ScoredColumn, second: ScoredColumn) -> Floats:
    spread = _fractions(first)
    np.subtract(spread, _fractions(second), out=spread)
    # Halving by multiplying: x * 0.5 and x / 2 are the same float64, and multiplying is faster.
    spread *= 0.5
    np.abs(spread, out=spread)
    if not (first.offered_everywhere and second.offered_everywhere):
        # A row with fewer than two fractions has no spread.
        spread[:, ~(first.offered() & second.offered())] = 0.0
    return spread


def _many_resource_spread(columns: Sequence[ScoredColumn], count: int) -> Floats:
    fractions = [_fractions(column) for column in columns]
    offered = [None if c.offered_everywhere else c.offered() for c in columns]
    counts = np.zeros(count, dtype=np.int64)
    for mask in offered:
        counts += 1 if mask is None else mask
    divisor = np.maximum(counts, 1).astype(np.float64)
    # Where a resource is not offered the sums are left as they are (upstream adds nothing).
    total = np.zeros((2, count), dtype=np.float64)
    for pair, mask in zip(fractions, offered, strict=True):
        np.add(total, pair, out=total, where=_everywhere(mask))
    mean = np.divide(total, divisor, out=total)
    squares = np.zeros((2, count), dtype=np.float64)
    deviation = np.empty((2, count), dtype=np.float64)
    for pair, mask in zip(fractions, offered, strict=True):
        np.subtract(pair, mean, out=deviation)
        np.multiply(deviation, deviation, out=deviation)
        np.add(squares, deviation, out=squares, where=_everywhere(mask))
    squares /= divisor
    spread = np.sqrt(squares, out=squares)
    if all(mask is None for mask in offered):
        return spread
    # Rows offering exactly two resources use |first - second| / 2 of those two; fewer, none.
    two = counts == 2
    if two.any():
        np.copyto(spread, _first_two(fractions, offered, count), where=two)
    np.copyto(spread, 0.0, where=counts < 2)
    return spread


def _first_two(fractions: list[Floats], offered: list[Mask | None], count: int) -> Floats:
    """|first - second| / 2 of each row's first two offered fractions (in resource order)."""
    if offered[0] is None and offered[1] is None:
        # The first two resources are offered on every row, so they come first everywhere.
        first, second = fractions[0], fractions[1]
    else:
        first = np.zeros((2, count), dtype=np.float64)
        second = np.zeros((2, count), dtype=np.float64)
        seen = np.zeros(count, dtype=np.int64)
        for pair, mask in zip(fractions, offered, strict=True):
            here = np.ones(count, dtype=np.bool_) if mask is None else mask
            np.copyto(first, pair, where=here & (seen == 0))
            np.copyto(second, pair, where=here & (seen == 1))
            seen += here
    difference = first - second
    difference *= 0.5
    spread: Floats = np.abs(difference, out=difference)
    return spread


def _everywhere(mask: Mask | None) -> Mask | bool:
    """A ufunc `where=` argument: the mask, or True for a resource offered on every row."""
    return True if mask is None else mask


def _scores_from_spread(spread: Floats) -> Vector:
    """improvement_score per row from the spread (std) without (row 0) and with (row 1) the pod.

    Consumes `spread`."""
    # balance = int((1 - std) * 100): exact integers from here on, kept as float64.
    balances = np.subtract(1.0, spread, out=spread)
    balances *= float(MAX_NODE_SCORE)
    np.trunc(balances, out=balances)
    change = balances[1] - balances[0]
    change += HALF_SCORE
    change *= 0.5
    np.trunc(change, out=change)  # Go's integer division truncates toward zero
    change += HALF_SCORE
    scores: Vector = change.astype(np.int64)
    return scores
