"""One plugin's whole scheduling cycle over a table, as comparable values: tests of what a
plugin remembers between cycles compare a long-lived instance with a fresh one through it."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from scheduler.framework import CycleState
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PreFilterResult
from scheduler.framework import Rows
from scheduler.framework import Scores
from scheduler.framework import Status
from scheduler.framework.plugins import BatchFilterPlugin
from scheduler.framework.plugins import BatchScorePlugin
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import score_batch


class CyclePlugin(BatchFilterPlugin, BatchScorePlugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]: ...

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status: ...

    def normalize_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows, scores: Scores
    ) -> Status: ...


def cycle_decisions(
    plugin: CyclePlugin, pod: Pod, table: NodeTable
) -> tuple[list[str], Status, list[Status], list[int]]:
    """Node names, PreFilter's status, Filter's statuses (when PreFilter succeeded), and raw
    then normalized scores (when PreScore succeeded)."""
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, table)
    statuses = filter_batch_as_statuses(plugin, state, pod, table) if status.is_success else []
    scored: list[int] = []
    if table.size and plugin.pre_score(state, pod, table, table.all_rows()).is_success:
        scored = score_batch(plugin, state, pod, table)
        scores = np.asarray(scored, dtype=np.int64)
        plugin.normalize_score(state, pod, table, table.all_rows(), scores)
        scored = [*scored, *scores.tolist()]
    return list(table.names), status, statuses, scored
