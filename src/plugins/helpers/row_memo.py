"""Per-row results remembered across cycles and refreshed only where the table changed.

Many pods in a row ask the same question of every node (replicas of one Deployment request the
same resources). The answer for a node changes only when that node's row changes, which the
table records in `pod_stamp` (bumped from `pod_clock` whenever a row's pods, allocatable,
labels or position change). A memo keyed by the question keeps the answer for every row and
recomputes only the rows stamped since it last looked: one comparison over the rows instead of
the whole computation.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from collections.abc import Hashable
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.framework import NodeTable
from scheduler.framework import Rows

Values = npt.NDArray[Any]
# Distinct questions remembered at once (least recently used ones are dropped).
DEFAULT_CAPACITY = 64


class _Entry:
    __slots__ = ("seen", "values")

    def __init__(self, values: Values, seen: int) -> None:
        self.values = values
        self.seen = seen


class RowMemo:
    """Answers per row, keyed by a hashable question, for one table at a time."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._table: weakref.ref[NodeTable] | None = None
        self._size = -1

    def values(self, table: NodeTable, key: Hashable, compute: Callable[[Rows], Values]) -> Values:
        """The answer for every row 0 .. size-1; `compute(rows)` answers for the given rows."""
        if self._table is None or self._table() is not table or self._size != table.size:
            # Another table, or rows were added or removed: nothing remembered still applies.
            self._entries.clear()
            self._table = weakref.ref(table)
            self._size = table.size
        entry = self._entries.get(key)
        if entry is None:
            entry = _Entry(compute(table.all_rows()), table.pod_clock)
            self._entries[key] = entry
            if len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
            return entry.values
        self._entries.move_to_end(key)
        if entry.seen != table.pod_clock:
            stamped = table.rows_stamped_since(entry.seen)
            if stamped is None:
                changed = np.flatnonzero(table.pod_stamp[: table.size] > entry.seen)
            else:
                changed = np.array(stamped, dtype=np.int64)
            if len(changed):
                entry.values[changed] = compute(changed.astype(np.int64, copy=False))
            entry.seen = table.pod_clock
        return entry.values

    def at(
        self, table: NodeTable, rows: Rows, key: Hashable, compute: Callable[[Rows], Values]
    ) -> Values:
        """The answer for `rows` (a copy, so callers may change it in place)."""
        values = self.values(table, key, compute)
        if table.covers(rows):
            return values.copy()
        return values[rows]
