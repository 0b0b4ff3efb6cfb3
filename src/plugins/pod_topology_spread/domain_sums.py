"""Matching pods per topology domain over the nodes carrying a set of keys, kept up to date.

PreFilter needs, per hard constraint, the domains of the nodes that carry every topology key
of the pod's constraints and the matching pods in each. Without inclusion policies that narrow
the nodes down for one particular pod, both depend only on node labels and on the per-row
counts of `MatchingPodCounts`, so they are remembered and moved by the rows whose pods changed
since (per-row differences added in), and rebuilt when node labels or the node set change.
"""

from __future__ import annotations

from typing import Final
from weakref import WeakKeyDictionary

import numpy as np
import numpy.typing as npt

from plugins.pod_topology_spread.domain_counts import BoolArray
from plugins.pod_topology_spread.domain_counts import Int64Array
from plugins.pod_topology_spread.pod_counts import MatchingPodCounts
from scheduler.framework import NodeTable
from scheduler.objects.labels import LabelSelector

IntpArray = npt.NDArray[np.intp]

# Distinct (namespace, selector, keys) remembered per table; the least recently used goes first.
SUMS_LIMIT: Final = 64


class _Sums:
    __slots__ = ("eligible", "ids", "label_version", "present", "row_counts", "seen", "sums")

    def __init__(
        self,
        table: NodeTable,
        topology_key: str,
        required_keys: tuple[str, ...],
        row_counts: Int64Array,
    ) -> None:
        size = table.size
        ids = table.label_ids(topology_key)[0].astype(np.intp)
        eligible = np.ones(size, dtype=np.bool_)
        for key in required_keys:
            eligible &= table.label_ids(key)[0] >= 0
        slots = len(table.label_ids(topology_key)[1]) + 1
        self.label_version = table.label_version
        self.seen = table.pod_clock
        self.ids = ids
        self.eligible = eligible
        self.row_counts = row_counts.copy()
        self.present: BoolArray = np.zeros(slots, dtype=np.bool_)
        self.present[ids[eligible]] = True
        self.present[-1] = False
        counted = np.flatnonzero(eligible & (row_counts > 0))
        self.sums: Int64Array = np.zeros(slots, dtype=np.int64)
        np.add.at(self.sums, ids[counted], row_counts[counted])

    def valid_for(self, table: NodeTable) -> bool:
        return self.label_version == table.label_version and len(self.ids) == table.size

    def catch_up(self, table: NodeTable, row_counts: Int64Array) -> None:
        if self.seen == table.pod_clock:
            return
        changed = np.flatnonzero(table.pod_stamp[: table.size] > self.seen)
        self.seen = table.pod_clock
        if not len(changed):
            return
        changed = changed[self.eligible[changed]]
        delta = row_counts[changed] - self.row_counts[changed]
        np.add.at(self.sums, self.ids[changed], delta)
        self.row_counts[changed] = row_counts[changed]


class DomainSums:
    """Per-domain presence and matching-pod sums, remembered per table and constraint shape."""

    def __init__(self, pod_counts: MatchingPodCounts, limit: int = SUMS_LIMIT) -> None:
        self._pod_counts = pod_counts
        self._limit = limit
        self._tables: WeakKeyDictionary[NodeTable, dict[object, _Sums]] = WeakKeyDictionary()

    def of(
        self,
        table: NodeTable,
        namespace: str,
        selector: LabelSelector | None,
        topology_key: str,
        required_keys: tuple[str, ...],
    ) -> tuple[BoolArray, Int64Array]:
        """(domains with a node carrying every required key, matching pods per domain).

        Both have one slot per value of `topology_key` plus a last slot that stays empty.
        They are shared: callers copy before changing them.
        """
        row_counts = self._pod_counts.per_row(table, namespace, selector)
        sums_by_key = self._tables.get(table)
        if sums_by_key is None:
            sums_by_key = {}
            self._tables[table] = sums_by_key
        selector_key = None if selector is None else selector.cache_key()
        key = (namespace, selector_key, topology_key, required_keys)
        sums = sums_by_key.pop(key, None)
        if sums is None or not sums.valid_for(table):
            sums = _Sums(table, topology_key, required_keys, row_counts)
        else:
            sums.catch_up(table, row_counts)
        sums_by_key[key] = sums
        if len(sums_by_key) > self._limit:
            del sums_by_key[next(iter(sums_by_key))]
        return sums.present, sums.sums
