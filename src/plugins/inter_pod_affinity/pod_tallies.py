"""Existing pods per table row, tallied once and kept current across cycles.

PreFilter and PreScore need, for the incoming pod, how many existing pods its terms select and
which existing pods' terms select it, per topology domain. Scanning every pod of the cluster for
that in every cycle costs milliseconds once thousands of pods match. Both questions are answered
from per-row tallies instead, refreshed only for the rows whose pods changed since they were last
read: the node table stamps a row from its `pod_clock` whenever the row's pods change, or the row
is rewritten or moved. Domains are not remembered: each cycle gathers the row tallies into the
domains of the node labels it sees, so node label changes need no bookkeeping.

- `IncomingTermTallies`: per row, the existing pods a matcher (one resolved term, or all of the
  affinity terms) selects; remembered per matcher, least recently used ones dropped.
- `ExistingTermIndex`: every distinct term existing pods carry, with its role (required or
  preferred, affinity or anti-affinity) and weight, and per row how many times it occurs. The
  incoming pod is then tested once per distinct term instead of once per existing pod.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Final
from weakref import WeakKeyDictionary

import numpy as np
import numpy.typing as npt

from plugins.inter_pod_affinity.terms import PodMatcher
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.objects.pod_affinity import AffinityTerm

Int64Array = npt.NDArray[np.int64]
TermKey = tuple[Hashable, ...]

# Distinct matchers of incoming pods remembered per table.
MATCHER_LIMIT: Final = 128


def term_key(term: AffinityTerm) -> TermKey:
    """What makes two terms select the same pods in the same domains."""
    selector = None if term.selector is None else term.selector.cache_key()
    namespace_selector = (
        None if term.namespace_selector is None else term.namespace_selector.cache_key()
    )
    return (selector, term.namespaces, namespace_selector, term.topology_key)


def _stale_rows(table: NodeTable, seen: int) -> npt.NDArray[np.intp]:
    """Rows whose pods may differ from what a tally that last looked at `seen` holds
    (every row holding pods when it never looked)."""
    size = table.size
    if seen < 0:
        return np.flatnonzero(table.pod_count[:size])
    return np.flatnonzero(table.pod_stamp[:size] > seen)


def _resized(counts: Int64Array, size: int) -> Int64Array:
    """`counts` fitted to `size` rows. Rows past the old end are new nodes, stamped anyway;
    rows past the new end were removed (the last row moved into a removed one is stamped)."""
    if len(counts) == size:
        return counts
    resized = np.zeros(size, dtype=np.int64)
    keep = min(size, len(counts))
    resized[:keep] = counts[:keep]
    return resized


class _MatcherTally:
    __slots__ = ("counts", "matches", "seen")

    def __init__(self, matches: PodMatcher) -> None:
        self.matches = matches
        self.counts: Int64Array = np.zeros(0, dtype=np.int64)
        self.seen = -1


class IncomingTermTallies:
    """Per-row counts of the existing pods a matcher selects, per table and matcher key."""

    def __init__(self, limit: int = MATCHER_LIMIT) -> None:
        self._limit = limit
        self._tables: WeakKeyDictionary[NodeTable, dict[Hashable, _MatcherTally]] = (
            WeakKeyDictionary()
        )

    def per_row(
        self, table: NodeTable, key: Hashable, compile_matcher: Callable[[], PodMatcher]
    ) -> Int64Array:
        """Counts for every row of `table`; valid until the table changes. Do not modify."""
        tallies = self._tables.get(table)
        if tallies is None:
            tallies = self._tables[table] = {}
        tally = tallies.pop(key, None)
        if tally is None:
            tally = _MatcherTally(compile_matcher())
        tallies[key] = tally  # re-inserted last: the most recently used
        if len(tallies) > self._limit:
            del tallies[next(iter(tallies))]
        if tally.seen != table.pod_clock or len(tally.counts) != table.size:
            counts = _resized(tally.counts, table.size)
            infos = table.node_infos
            matches = tally.matches
            for row in _stale_rows(table, tally.seen).tolist():
                counts[row] = sum(
                    1 for pod in infos[row].pods.values() if matches(pod.namespace, pod.labels)
                )
            tally.counts = counts
            tally.seen = table.pod_clock
        return tally.counts


class Role(Enum):
    """How an existing pod carries a term."""

    REQUIRED_AFFINITY = "required affinity"
    REQUIRED_ANTI_AFFINITY = "required anti-affinity"
    PREFERRED_AFFINITY = "preferred affinity"
    PREFERRED_ANTI_AFFINITY = "preferred anti-affinity"


EntryKey = tuple[Role, int, TermKey]


@dataclass(slots=True)
class ExistingTerm:
    """One distinct (role, weight, term) of existing pods and how often each row carries it."""

    role: Role
    # The preferred term's weight; 0 for required terms.
    weight: int
    term: AffinityTerm
    counts: Int64Array
    total: int = 0


# The roles of a required and of a preferred term, in pod affinity and in pod anti-affinity.
_SECTION_ROLES = (
    (Role.REQUIRED_AFFINITY, Role.PREFERRED_AFFINITY),
    (Role.REQUIRED_ANTI_AFFINITY, Role.PREFERRED_ANTI_AFFINITY),
)


def _carried_terms(pod: Pod) -> Iterable[tuple[Role, int, AffinityTerm]]:
    for section, (required, preferred) in zip(
        (pod.pod_affinity, pod.pod_anti_affinity), _SECTION_ROLES, strict=True
    ):
        if section is None:
            continue
        for term in section.required:
            yield required, 0, term
        for weighted in section.preferred:
            yield preferred, weighted.weight, weighted.term


class _TableIndex:
    __slots__ = ("by_role", "entries", "row_entries", "seen", "size")

    def __init__(self) -> None:
        self.entries: dict[EntryKey, ExistingTerm] = {}
        self.by_role: dict[Role, dict[EntryKey, ExistingTerm]] = {role: {} for role in Role}
        # Per row, the entries its pods carry and how often (None: none).
        self.row_entries: list[Mapping[EntryKey, int] | None] = []
        self.seen = -1
        self.size = 0


class ExistingTermIndex:
    """The terms existing pods carry, per table, with per-row occurrence counts."""

    def __init__(self) -> None:
        self._tables: WeakKeyDictionary[NodeTable, _TableIndex] = WeakKeyDictionary()

    def terms(self, table: NodeTable, role: Role) -> Iterable[ExistingTerm]:
        """The distinct terms of `role` some existing pod on a node of `table` carries; their
        `counts` are valid until the table changes. Do not modify."""
        index = self._tables.get(table)
        if index is None:
            index = self._tables[table] = _TableIndex()
        if index.seen != table.pod_clock or index.size != table.size:
            self._refresh(index, table)
        return index.by_role[role].values()

    @staticmethod
    def _refresh(index: _TableIndex, table: NodeTable) -> None:
        size = table.size
        if index.size != size:
            for kept in index.entries.values():
                kept.counts = _resized(kept.counts, size)
            for row in range(size, index.size):
                _forget_row(index, index.row_entries[row], row)
            del index.row_entries[size:]
            index.row_entries.extend([None] * (size - len(index.row_entries)))
            index.size = size
        infos = table.node_infos
        for row in _stale_rows(table, index.seen).tolist():
            _forget_row(index, index.row_entries[row], row)
            carried: Counter[EntryKey] = Counter()
            terms: dict[EntryKey, AffinityTerm] = {}
            for pod in infos[row].pods.values():
                if pod.pod_affinity is None and pod.pod_anti_affinity is None:
                    continue
                for role, weight, term in _carried_terms(pod):
                    key = (role, weight, term_key(term))
                    carried[key] += 1
                    terms.setdefault(key, term)
            for key, count in carried.items():
                entry = index.entries.get(key)
                if entry is None:
                    role, weight, _ = key
                    entry = ExistingTerm(role, weight, terms[key], np.zeros(size, dtype=np.int64))
                    index.entries[key] = entry
                    index.by_role[role][key] = entry
                entry.counts[row] = count
                entry.total += count
            index.row_entries[row] = carried or None
        index.seen = table.pod_clock


def _forget_row(index: _TableIndex, carried: Mapping[EntryKey, int] | None, row: int) -> None:
    """Take one row's former occurrences out of the index (entries left with none go)."""
    if carried is None:
        return
    for key, count in carried.items():
        found = index.entries[key]
        if row < len(found.counts):
            found.counts[row] = 0
        found.total -= count
        if found.total == 0:
            del index.entries[key]
            del index.by_role[found.role][key]
    index.row_entries[row] = None
