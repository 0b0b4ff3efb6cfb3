"""Topology domains of one cycle and counts kept per domain.

A domain is a (topology key, value) pair. The node table already interns each label key's
values into ids, so a count per domain is an array indexed by value id, one per key; a node's
count is `counts[key][ids[row]]` and a whole set of rows is one gather.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from scheduler.framework import NodeTable
from scheduler.objects.node import Node

IdArray = npt.NDArray[np.int32]
CountArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

ABSENT = -1


class DomainIndex:
    """Value ids of topology keys, per table row and per node, for the current cycle."""

    __slots__ = ("_row_lists", "_table", "_value_ids")

    def __init__(self, table: NodeTable) -> None:
        self._table = table
        self._row_lists: dict[str, list[int]] = {}
        # Built only when a node has to be looked up by label value (see `id_for_node`).
        self._value_ids: dict[str, dict[str, int]] = {}

    def ids(self, key: str) -> IdArray:
        """Value id of `key` for every row of the table (-1 where the node lacks the label)."""
        return self._table.label_ids(key)[0]

    def size(self, key: str) -> int:
        """Number of value ids of `key` known to this cycle."""
        extra = self._value_ids.get(key)
        return len(extra) if extra is not None else len(self._table.label_ids(key)[1])

    def row_ids(self, key: str) -> list[int]:
        """`ids(key)` as a list: indexing it row by row in Python loops is much cheaper."""
        found = self._row_lists.get(key)
        if found is None:
            found = self.ids(key).tolist()
            self._row_lists[key] = found
        return found

    def id_for_node(self, key: str, node: Node) -> int:
        """The node's value id for `key`, or -1 when it lacks the label.

        The table row answers for nodes it holds; a node it does not hold (a copy made for a
        what-if question) is looked up by value, and a value the table has never seen gets a
        fresh id past the table's vocabulary.
        """
        value = node.labels.get(key)
        if value is None:
            return ABSENT
        row = self._table.row_of(node.name)
        if row is not None:
            row_node = self._table.node_infos[row].node
            if row_node is node or (row_node is not None and row_node.labels.get(key) == value):
                return self.row_ids(key)[row]
        lookup = self._value_ids.get(key)
        if lookup is None:
            values = self._table.label_ids(key)[1]
            lookup = {v: i for i, v in enumerate(values)}
            self._value_ids[key] = lookup
        found = lookup.get(value)
        if found is None:
            found = len(lookup)
            lookup[value] = found
        return found


class RowSums:
    """Per topology key: the rows where some term matched an existing pod there, and the summed
    weight of those matches per row.

    Built from per-row tallies (`pod_tallies`), one array operation per matching term;
    `TopologyCounts.from_row_sums` then sums the rows into their nodes' domains.
    """

    __slots__ = ("hits", "sums")

    def __init__(self) -> None:
        self.hits: dict[str, BoolArray] = {}
        self.sums: dict[str, CountArray] = {}

    def add(self, key: str, occurrences: CountArray, weight: int) -> None:
        """Count `occurrences` (matches per row) of a term of topology `key`, each weighing
        `weight`."""
        hit = occurrences > 0
        if not hit.any():
            return
        sums = self.sums.get(key)
        if sums is None:
            self.hits[key] = hit
            self.sums[key] = occurrences * weight
        else:
            self.hits[key] |= hit
            sums += occurrences * weight

    def lands_in_domain(self, domains: DomainIndex) -> bool:
        """Whether any match is on a node that has the match's topology key."""
        return any(bool((hit & (domains.ids(key) >= 0)).any()) for key, hit in self.hits.items())


class TopologyCounts:
    """An integer per topology domain; absent domains count zero.

    Tracks how many domains hold a non-zero count, so "is anything counted" is O(1): upstream
    keeps these as maps and deletes entries that fall back to zero.
    """

    __slots__ = ("_arrays", "_nonzero")

    def __init__(self) -> None:
        self._arrays: dict[str, CountArray] = {}
        self._nonzero = 0

    @classmethod
    def from_row_sums(cls, rows: RowSums, domains: DomainIndex) -> TopologyCounts:
        """Sum the weights recorded per row into their nodes' domains, one bincount per key."""
        counts = cls()
        for key, hit in rows.hits.items():
            at = np.flatnonzero(hit)
            ids = domains.ids(key)[at]
            present = ids >= 0
            weights = rows.sums[key][at][present]
            summed = np.bincount(ids[present], weights=weights, minlength=domains.size(key))
            # Weighted sums come back as float64; they are exact integers well below 2**53.
            array = np.rint(summed).astype(np.int64)
            counts._arrays[key] = array
            counts._nonzero += int(np.count_nonzero(array))
        return counts

    @property
    def empty(self) -> bool:
        return self._nonzero == 0

    def topology_keys(self) -> Iterable[str]:
        return self._arrays.keys()

    def add(self, key: str, value_id: int, delta: int, domains: DomainIndex) -> None:
        if value_id < 0 or delta == 0:
            return
        array = self._arrays.get(key)
        if array is None or value_id >= len(array):
            array = self._grown(key, max(domains.size(key), value_id + 1))
        before = int(array[value_id])
        after = before + delta
        array[value_id] = after
        self._nonzero += (after != 0) - (before != 0)

    def at(self, key: str, value_id: int) -> int:
        array = self._arrays.get(key)
        if array is None or value_id < 0 or value_id >= len(array):
            return 0
        return int(array[value_id])

    def gather(self, key: str, ids: IdArray) -> CountArray:
        """Counts at `ids` (0 where an id is -1 or unknown)."""
        array = self._arrays.get(key)
        if array is None:
            return np.zeros(len(ids), dtype=np.int64)
        # One trailing zero slot: id -1 reads it, as does any id clipped past the end.
        padded = np.append(array, 0)
        safe = np.where((ids >= 0) & (ids < len(array)), ids, -1)
        gathered: CountArray = padded[safe]
        return gathered

    def clone(self) -> TopologyCounts:
        copy = TopologyCounts()
        copy._arrays = {key: array.copy() for key, array in self._arrays.items()}
        copy._nonzero = self._nonzero
        return copy

    def _grown(self, key: str, size: int) -> CountArray:
        old = self._arrays.get(key)
        array = np.zeros(size, dtype=np.int64)
        if old is not None:
            array[: len(old)] = old
        self._arrays[key] = array
        return array
