"""The node-parallel Filter executor over the node table.

Batch (vectorized) plugins filter a whole chunk of rows with a few numpy operations; per-node
plugins are run row by row on what is left of the chunk. Plugins run in configured order and a
row stops at its first rejection, so a node's recorded reason is the first plugin's, exactly as
when plugins run node by node.

Rows are visited in chunks from a rotating start (upstream's nextStartNodeIndex) until enough
feasible nodes are found; with every node scored the single chunk is the whole table.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis
from scheduler.framework.node_table import NodeTable
from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Code
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.profile import Profile

Rows = npt.NDArray[np.int64]

# Upstream's bounds for the adaptive share of nodes to find feasible.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
# Rows handled per step when searching a rotating window; big enough to amortise numpy calls.
CHUNK_ROWS = 512


# A plugin returned Error for some node: the whole attempt fails with that status.
FilterError = invoke.PluginError


def num_feasible_nodes_to_find(
    total: int, percentage: int | None, *, has_scoring: bool, vectorized: bool
) -> int:
    """How many feasible nodes to look for (upstream's numFeasibleNodesToFind).

    An unset percentage means every node when the profile is fully vectorized (scoring all of
    them costs little) and upstream's adaptive share otherwise.
    """
    if not has_scoring:
        return 1 if total else 0
    if total < MIN_FEASIBLE_NODES_TO_FIND:
        return total
    if percentage is None or percentage == 0:
        if vectorized:
            return total
        percentage = max(50 - total // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    if percentage >= 100:
        return total
    return max(total * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def _filter_chunk(
    profile: Profile,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    rows: Rows,
    diagnosis: Diagnosis,
) -> Rows:
    candidates = rows
    for entry in profile.filter:
        if not len(candidates):
            break
        plugin = entry.plugin
        if plugin.name in state.skip_filter_plugins:
            continue
        started = time.perf_counter()
        evaluated = len(candidates)
        rejected: dict[str, int] | None = None
        if entry.batch is not None:
            batch = invoke.filter_batch(entry.batch, state, pod, table, candidates)
            # A batch made knowing every row passes has nothing to record.
            failed = None if batch.passed_all else batch.codes != 0
            if failed is not None and failed.any():
                codes = invoke.rejection_codes(plugin.name, batch, failed)
                reason_ids = None if batch.reason_ids is None else batch.reason_ids[failed]
                diagnosis.reject_rows(
                    candidates[failed], codes, plugin.name, batch.reasons, reason_ids
                )
                candidates = candidates[~failed]
                if state.record_plugin_metrics:
                    rejected = _tally(codes.tolist())
        else:
            row_list: list[int] = candidates.tolist()
            failed_rows = invoke.filter_rows(plugin, state, pod, table.node_infos, row_list)
            if failed_rows:
                keep = np.ones(len(candidates), dtype=np.bool_)
                for i, status in failed_rows:
                    diagnosis.reject_row(row_list[i], status)
                    keep[i] = False
                candidates = candidates[keep]
                if state.record_plugin_metrics:
                    rejected = _tally([status.code for _, status in failed_rows])
        profile.observe_plugin(
            state, plugin.name, "Filter", SUCCESS, started, evaluated=evaluated, rejected=rejected
        )
    return candidates


def _tally(codes: Iterable[int]) -> dict[str, int]:
    """How many rejections carry each status code, by the code's metric label."""
    return {Code(code).label: n for code, n in Counter(codes).items()}


class FilterRun:
    """Finds feasible rows for one pod; remembers the rotating start between cycles."""

    def __init__(self) -> None:
        self.next_start = 0

    def find_feasible(
        self,
        profile: Profile,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        allowed: Rows | None,
        diagnosis: Diagnosis,
        nominated_by_row: dict[int, Sequence[Pod]],
        *,
        extenders_choose: bool = False,
    ) -> Rows:
        """The feasible rows: one is enough when nothing ranks them (no Score plugin, and no
        HTTP extender that filters or prioritizes, as upstream's numFeasibleNodesToFind)."""
        rows = table.all_rows() if allowed is None else allowed
        if not len(rows):
            # A PreFilter result naming only nodes that do not exist leaves nothing to filter;
            # the rows it excluded already carry their reason in the diagnosis.
            return rows
        total = table.size
        wanted = num_feasible_nodes_to_find(
            len(rows),
            profile.percentage_of_nodes_to_score,
            has_scoring=bool(profile.score) or extenders_choose,
            vectorized=profile.vectorized,
        )
        if not profile.filter:
            # No Filter plugins: the first `wanted` nodes from the rotating start are feasible.
            start = self.next_start % max(len(rows), 1)
            chosen = np.roll(rows, -start)[:wanted]
            self.next_start = (self.next_start + len(chosen)) % max(total, 1)
            return chosen
        # The whole Filter pass is one observation of the Filter point, as upstream's.
        return profile.observed_point(
            "Filter",
            lambda: self._search(
                profile, state, pod, table, rows, wanted, diagnosis, nominated_by_row
            ),
        )

    def _search(
        self,
        profile: Profile,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        rows: Rows,
        wanted: int,
        diagnosis: Diagnosis,
        nominated_by_row: dict[int, Sequence[Pod]],
    ) -> Rows:
        total = table.size
        if wanted < len(rows):
            rows = np.roll(rows, -(self.next_start % len(rows)))
        found: list[Rows] = []
        count = processed = 0
        step = len(rows) if wanted >= len(rows) else CHUNK_ROWS
        for begin in range(0, len(rows), step):
            # One chunk of every row is `rows` itself, not a slice of it: a slice is another
            # array, so `table.covers` would no longer recognise table.all_rows() in it and
            # every batch form would gather its columns instead of reading views.
            chunk = rows if step >= len(rows) else rows[begin : begin + step]
            processed += len(chunk)
            feasible = self._filter_with_nominated_rows(
                profile, state, pod, table, chunk, diagnosis, nominated_by_row
            )
            found.append(feasible)
            count += len(feasible)
            if count >= wanted:
                break
        if len(found) == 1:
            feasible_rows = found[0]  # keeps table.all_rows() recognisable when nothing failed
        else:
            feasible_rows = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
        if len(feasible_rows) > wanted:
            feasible_rows = feasible_rows[:wanted]
        if total:
            self.next_start = (self.next_start + processed) % total
        return feasible_rows

    def _filter_with_nominated_rows(
        self,
        profile: Profile,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        chunk: Rows,
        diagnosis: Diagnosis,
        nominated_by_row: dict[int, Sequence[Pod]],
    ) -> Rows:
        if not nominated_by_row:
            return _filter_chunk(profile, state, pod, table, chunk, diagnosis)
        special = np.isin(chunk, np.fromiter(nominated_by_row, dtype=np.int64))
        plain = _filter_chunk(profile, state, pod, table, chunk[~special], diagnosis)
        extra: list[int] = []
        for row in chunk[special].tolist():
            status = profile.chain.run_with_nominated(
                state, pod, table.node_infos[row], nominated_by_row[row]
            )
            if status.is_success:
                extra.append(row)
            elif status.is_rejected:
                diagnosis.reject_row(row, status)
            else:
                raise FilterError(status)
        if not extra:
            return plain
        return np.sort(np.concatenate([plain, np.asarray(extra, dtype=np.int64)]))
