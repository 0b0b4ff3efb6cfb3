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


class DomainHits:
    """Table rows where a term matched, per topology key, optionally with a weight per hit.

    Hot loops only append row numbers; `TopologyCounts.from_hits` turns them into per-domain
    sums afterwards with numpy, so no per-pod dictionary work is done. A key's hits are either
    all unweighted (`rows_of`) or all weighted (`add_weighted`, `add_many`).
    """

    __slots__ = ("rows", "weights")

    def __init__(self) -> None:
        self.rows: dict[str, list[int]] = {}
        self.weights: dict[str, list[int]] = {}

    def rows_of(self, key: str) -> list[int]:
        """The list to append unweighted hits of `key` to."""
        found = self.rows.get(key)
        if found is None:
            found = self.rows[key] = []
        return found

    def add_weighted(self, key: str, row: int, weight: int) -> None:
        self.rows_of(key).append(row)
        self.weights.setdefault(key, []).append(weight)

    def add_many(self, key: str, rows: list[int], weight: int) -> None:
        self.rows_of(key).extend(rows)
        self.weights.setdefault(key, []).extend([weight] * len(rows))

    def lands_in_domain(self, domains: DomainIndex) -> bool:
        """Whether any hit is on a node that has the hit's topology key."""
        return any(
            rows and bool((domains.ids(key)[np.asarray(rows, dtype=np.int64)] >= 0).any())
            for key, rows in self.rows.items()
        )


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
    def from_hits(cls, hits: DomainHits, domains: DomainIndex) -> TopologyCounts:
        """Sum the hits recorded per row into their nodes' domains, one bincount per key."""
        counts = cls()
        for key, rows in hits.rows.items():
            if not rows:
                continue
            ids = domains.ids(key)[np.asarray(rows, dtype=np.int64)]
            present = ids >= 0
            weights = hits.weights.get(key)
            if weights is not None and len(weights) != len(rows):
                raise ValueError(f"hits of {key!r} mix weighted and unweighted rows")
            chosen = None if weights is None else np.asarray(weights, dtype=np.int64)[present]
            summed = np.bincount(ids[present], weights=chosen, minlength=domains.size(key))
            # Weighted sums come back as float64; they are exact integers well below 2**53.
            array = (summed if chosen is None else np.rint(summed)).astype(np.int64)
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
