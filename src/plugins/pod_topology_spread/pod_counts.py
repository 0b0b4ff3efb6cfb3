"""How many pods on each node a constraint counts, kept up to date across cycles.

Counting means visiting every pod in the cluster, far too slow to repeat for every pod being
scheduled. So counts per row are remembered per (namespace, selector) and, on the next request,
recounted only for the rows whose pods changed since: the node table stamps a row from its
`pod_clock` whenever the row's pods change, or the row is rewritten or moved. A pod counts when it
is in the namespace, matches the selector and is not being deleted (upstream skips terminating
pods). Only plain numbers are remembered, never nodes or pods.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Final
from weakref import WeakKeyDictionary

import numpy as np
import numpy.typing as npt

from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.objects.labels import LabelSelector

Int64Array = npt.NDArray[np.int64]
LabelMatcher = Callable[[Mapping[str, str]], bool]

# Distinct selectors remembered per table; the least recently used goes first.
TALLY_LIMIT: Final = 256


def compile_selector(selector: LabelSelector) -> LabelMatcher:
    """A matcher for `selector`, with a fast path for plain `key In (one value)` selectors."""
    requirements = selector.requirements
    if all(r.operator == "In" and len(r.values) == 1 for r in requirements):
        pairs = tuple((r.key, next(iter(r.values))) for r in requirements)

        def matches_pairs(labels: Mapping[str, str]) -> bool:
            return all(labels.get(key) == value for key, value in pairs)

        return matches_pairs
    return selector.matches


def count_matching(pods: Iterable[Pod], namespace: str, matches: LabelMatcher) -> int:
    return sum(
        1 for pod in pods if pod.namespace == namespace and not pod.deleting and matches(pod.labels)
    )


class _Tally:
    __slots__ = ("counts", "matches", "seen")

    def __init__(self, matches: LabelMatcher) -> None:
        self.matches = matches
        self.counts: Int64Array = np.zeros(0, dtype=np.int64)
        self.seen = -1  # the table's pod_clock when the counts were last brought up to date


class MatchingPodCounts:
    """Per-row counts of matching pods, remembered per table and (namespace, selector)."""

    def __init__(self, limit: int = TALLY_LIMIT) -> None:
        self._limit = limit
        self._tables: WeakKeyDictionary[NodeTable, dict[object, _Tally]] = WeakKeyDictionary()

    def per_row(
        self, table: NodeTable, namespace: str, selector: LabelSelector | None
    ) -> Int64Array:
        """Counts for every row of `table`; valid until the table changes. Do not modify."""
        size = table.size
        if selector is None or not selector.requirements:
            return np.zeros(size, dtype=np.int64)
        tallies = self._tables.get(table)
        if tallies is None:
            tallies = {}
            self._tables[table] = tallies
        key = (namespace, selector.cache_key())
        tally = tallies.pop(key, None)
        if tally is None:
            tally = _Tally(compile_selector(selector))
        tallies[key] = tally  # re-inserted last: the most recently used
        if len(tallies) > self._limit:
            del tallies[next(iter(tallies))]
        self._refresh(tally, table, namespace)
        return tally.counts[:size]

    @staticmethod
    def _refresh(tally: _Tally, table: NodeTable, namespace: str) -> None:
        size = table.size
        if tally.seen == table.pod_clock and len(tally.counts) == size:
            return  # no row's pods changed since (e.g. asked again in the same cycle)
        if tally.seen < 0:
            counts = np.zeros(size, dtype=np.int64)
            stale = np.flatnonzero(table.pod_count[:size])
        else:
            counts = tally.counts
            if len(counts) != size:
                resized = np.zeros(size, dtype=np.int64)
                keep = min(size, len(counts))
                resized[:keep] = counts[:keep]
                counts = resized
            stale = np.flatnonzero(table.pod_stamp[:size] > tally.seen)
        infos = table.node_infos
        matches = tally.matches
        for row in stale.tolist():
            counts[row] = count_matching(infos[row].pods.values(), namespace, matches)
        tally.counts = counts
        tally.seen = table.pod_clock
