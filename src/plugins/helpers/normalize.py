"""Upstream's DefaultNormalizeScore over a numpy score array, and a ScoreExtensions using it."""

from __future__ import annotations

import numpy as np

from scheduler.framework import MAX_NODE_SCORE
from scheduler.framework import SUCCESS
from scheduler.framework import CycleState
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import Scores
from scheduler.framework import Status


def _truncating_divide(numerator: Scores, denominator: int) -> Scores:
    """Integer division rounding toward zero, as Go's `/` does (numpy's `//` floors)."""
    quotient: Scores = np.abs(numerator) // denominator
    return np.where(numerator < 0, -quotient, quotient).astype(np.int64)


def default_normalize_score(max_priority: int, reverse: bool, scores: Scores) -> None:
    """Scale `scores` in place so the highest becomes `max_priority`; `reverse` flips them.

    When no score is positive there is nothing to scale by: scores stay as they are, or all
    become `max_priority` when reversed (every node is equally good).
    """
    if scores.size == 0:
        return
    highest = max(int(scores.max()), 0)
    if highest == 0:
        if reverse:
            scores[:] = max_priority
        return
    scaled = _truncating_divide(scores * max_priority, highest)
    if reverse:
        scaled = max_priority - scaled
    scores[:] = scaled


class DefaultNormalizer:
    """ScoreExtensions that applies `default_normalize_score` with MaxNodeScore."""

    __slots__ = ("reverse",)

    def __init__(self, reverse: bool = False) -> None:
        self.reverse = reverse

    def normalize_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows, scores: Scores
    ) -> Status:
        default_normalize_score(MAX_NODE_SCORE, self.reverse, scores)
        return SUCCESS
