"""PreScore, Score, NormalizeScore, weights and host selection."""

from __future__ import annotations

import random
import time

import numpy as np
import numpy.typing as npt

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_table import NodeTable
from scheduler.framework.status import MAX_NODE_SCORE, MIN_NODE_SCORE, Status
from scheduler.objects.pod import Pod
from scheduler.runtime.profile import Profile, ScoreEntry

Rows = npt.NDArray[np.int64]
Scores = npt.NDArray[np.int64]


class ScoringError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def run_pre_score(
    profile: Profile, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
) -> Status:
    started = time.perf_counter()
    for plugin in profile.pre_score:
        plugin_started = time.perf_counter()
        status = plugin.pre_score(state, pod, table, rows)
        profile.observe_plugin(state, plugin.name, "PreScore", status, plugin_started)
        if status.is_skip:
            state.skip_score_plugins.add(plugin.name)
            continue
        if not status.is_success:
            error = Status.from_error(
                f'running PreScore plugin "{plugin.name}": {status.message()}'
            ).with_plugin(plugin.name)
            profile.observe("PreScore", error, started)
            return error
    profile.observe("PreScore", Status(), started)
    return Status()


def _raw_scores(
    entry: ScoreEntry, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
) -> Scores:
    if entry.batch is not None:
        return np.asarray(entry.batch.score_nodes(state, pod, table, rows), dtype=np.int64)
    plugin = entry.plugin
    scores = np.empty(len(rows), dtype=np.int64)
    infos = table.node_infos
    for i, row in enumerate(rows.tolist()):
        value, status = plugin.score(state, pod, infos[row])
        if not status.is_success:
            raise ScoringError(
                Status.from_error(
                    f'running Score plugin "{plugin.name}": {status.message()}'
                ).with_plugin(plugin.name)
            )
        scores[i] = value
    return scores


def run_score(
    profile: Profile, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
) -> Scores:
    """Weighted total score of each row in `rows` (raises ScoringError on a plugin failure)."""
    started = time.perf_counter()
    totals = np.zeros(len(rows), dtype=np.int64)
    for entry in profile.score:
        name = entry.plugin.name
        if name in state.skip_score_plugins:
            continue
        plugin_started = time.perf_counter()
        scores = _raw_scores(entry, state, pod, table, rows)
        if entry.extensions is not None:
            status = entry.extensions.normalize_score(state, pod, table, rows, scores)
            if not status.is_success:
                raise ScoringError(
                    Status.from_error(
                        f'running Normalize on Score plugins: plugin "{name}" failed with: '
                        f"{status.message()}"
                    ).with_plugin(name)
                )
        # One reduction: as unsigned, a negative score is huge, so max > 100 catches both ends.
        if len(scores) and int(scores.view(np.uint64).max()) > MAX_NODE_SCORE:
            bad = int(scores[(scores < MIN_NODE_SCORE) | (scores > MAX_NODE_SCORE)][0])
            raise ScoringError(
                Status.from_error(
                    f'plugin "{name}" returns an invalid score {bad}, it should in the range of '
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                ).with_plugin(name)
            )
        if entry.weight == 1:
            totals += scores
        else:
            totals += scores * entry.weight
        profile.observe_plugin(state, name, "Score", Status(), plugin_started, evaluated=len(rows))
    profile.observe("Score", Status(), started)
    return totals


def select_host(rows: Rows, totals: Scores, rng: random.Random) -> int:
    """The row with the highest total; ties broken uniformly at random."""
    best = np.flatnonzero(totals == totals.max())
    pick = best[rng.randrange(len(best))] if len(best) > 1 else best[0]
    return int(rows[pick])
