"""PreScore, Score, NormalizeScore, weights and host selection."""

from __future__ import annotations

import random
import time

import numpy as np
import numpy.typing as npt

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_table import NodeTable
from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.profile import Profile
from scheduler.runtime.profile import ScoreEntry

Rows = npt.NDArray[np.int64]
Scores = npt.NDArray[np.int64]


# A Score or NormalizeScore plugin failed: the whole attempt fails with its status.
ScoringError = invoke.PluginError


def run_pre_score(
    profile: Profile, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
) -> Status:
    started = time.perf_counter()
    for plugin in profile.pre_score:
        plugin_started = time.perf_counter()
        status = invoke.call_status(
            "PreScore", plugin.name, plugin.pre_score, state, pod, table, rows
        )
        profile.observe_plugin(state, plugin.name, "PreScore", status, plugin_started)
        if status.is_skip:
            state.skip_score_plugins.add(plugin.name)
            continue
        if not status.is_success:
            error = invoke.error_status("PreScore", plugin.name, status)
            profile.observe("PreScore", error, started)
            return error
    profile.observe("PreScore", SUCCESS, started)
    return SUCCESS


def raw_scores(
    entry: ScoreEntry, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
) -> Scores:
    """One Score plugin's scores of `rows`, before NormalizeScore and weight (explain shows
    them too)."""
    if entry.batch is not None:
        return invoke.score_batch(entry.batch, state, pod, table, rows)
    return invoke.score_rows(entry.plugin, state, pod, table.node_infos, rows)


def normalize_scores(
    entry: ScoreEntry, state: CycleState, pod: Pod, table: NodeTable, rows: Rows, scores: Scores
) -> Status:
    """Run the plugin's NormalizeScore on `scores` (it rewrites them in place); SUCCESS for a
    plugin without ScoreExtensions. Explain calls it too, so its figures are the cycle's."""
    if entry.extensions is None:
        return SUCCESS
    return invoke.call_status(
        "NormalizeScore",
        entry.plugin.name,
        entry.extensions.normalize_score,
        state,
        pod,
        table,
        rows,
        scores,
    )


def run_score(
    profile: Profile, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
) -> Scores:
    """Weighted total score of each row in `rows` (raises ScoringError on a plugin failure)."""
    return profile.observed_point(
        "Score", lambda: _weighted_totals(profile, state, pod, table, rows)
    )


def _weighted_totals(
    profile: Profile, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
) -> Scores:
    totals = np.zeros(len(rows), dtype=np.int64)
    for entry in profile.score:
        name = entry.plugin.name
        if name in state.skip_score_plugins:
            continue
        plugin_started = time.perf_counter()
        scores = raw_scores(entry, state, pod, table, rows)
        if entry.extensions is not None:  # most plugins have none: no call for them
            normalize_started = time.perf_counter()
            status = normalize_scores(entry, state, pod, table, rows, scores)
            profile.observe_duration(
                state, name, "ScoreExtensionNormalize", status, normalize_started
            )
            if not status.is_success:
                raise ScoringError(invoke.error_status("NormalizeScore", name, status))
        invoke.check_score_range(name, scores)
        if entry.weight == 1:
            totals += scores
        else:
            totals += scores * entry.weight
        profile.observe_plugin(state, name, "Score", SUCCESS, plugin_started, evaluated=len(rows))
    return totals


def select_host(rows: Rows, totals: Scores, rng: random.Random) -> int:
    """The row with the highest total; ties broken uniformly at random."""
    best = np.flatnonzero(totals == totals.max())
    pick = best[rng.randrange(len(best))] if len(best) > 1 else best[0]
    return int(rows[pick])
