"""How many devices each node could still give one request alternative, each on its own, as a
column over the node table, kept across cycles: a node's count is redone only when a device of
one of its pools was taken, shared or freed (which is also all that changes what its counters
and shared capacity leave), and the whole column only when nodes or slices changed. Filter
then decides every node of a one-request pod with one comparison."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from collections.abc import Hashable

import numpy as np
import numpy.typing as npt

from plugins.dynamic_resources.allocated_devices import AllocatedDevices
from plugins.dynamic_resources.inventory import Device
from scheduler.framework import Node
from scheduler.framework import NodeTable

Counts = npt.NDArray[np.int32]
Pool = tuple[str, str]
CandidatesOf = Callable[[Node], tuple[Device, ...]]
IsFree = Callable[[Device], bool]


class _Column:
    __slots__ = ("counts", "layout", "pool_rows", "position")

    def __init__(
        self,
        counts: Counts,
        layout: tuple[int, int, int],
        pool_rows: dict[Pool, list[int]],
        position: tuple[int, int],
    ) -> None:
        self.counts = counts
        self.layout = layout
        self.pool_rows = pool_rows
        self.position = position


def _free(found: tuple[Device, ...], is_free: IsFree) -> int:
    return sum(1 for d in found if is_free(d))


class FreeDeviceColumns:
    """One column per question (alternative selectors and inventory version)."""

    def __init__(self, capacity: int = 64) -> None:
        self._capacity = capacity
        self._columns: dict[Hashable, _Column] = {}
        self._table: weakref.ref[NodeTable] | None = None

    def counts(
        self,
        table: NodeTable,
        key: Hashable,
        candidates_of: CandidatesOf,
        taken: AllocatedDevices,
        is_free: IsFree,
    ) -> Counts:
        """Free candidate devices per row 0 .. size-1 (rows without a node count 0); `taken`
        tells which pools changed, `is_free` whether a device could be given now."""
        if self._table is None or self._table() is not table:
            self._columns.clear()
            self._table = weakref.ref(table)
        # Rows move or change their node when nodes are added, removed or rewritten.
        layout = (table.size, table.label_version, id(table.node_infos))
        column = self._columns.get(key)
        if column is None or column.layout != layout:
            column = self._build(table, layout, candidates_of, taken, is_free)
            self._columns[key] = column
            if len(self._columns) > self._capacity:
                self._columns.pop(next(iter(self._columns)))
            return column.counts
        changed = taken.pools_changed_since(column.position)
        if changed is None:
            column = self._build(table, layout, candidates_of, taken, is_free)
            self._columns[key] = column
            return column.counts
        column.position = taken.position
        rows = {row for pool in changed for row in column.pool_rows.get(pool, ())}
        infos = table.node_infos
        for row in rows:
            node = infos[row].node
            column.counts[row] = _free(candidates_of(node), is_free) if node is not None else 0
        return column.counts

    def _build(
        self,
        table: NodeTable,
        layout: tuple[int, int, int],
        candidates_of: CandidatesOf,
        taken: AllocatedDevices,
        is_free: IsFree,
    ) -> _Column:
        counts = np.zeros(table.size, dtype=np.int32)
        pool_rows: dict[Pool, list[int]] = {}
        for row, info in enumerate(table.node_infos[: table.size]):
            node = info.node
            if node is None:
                continue
            found = candidates_of(node)
            counts[row] = _free(found, is_free)
            for pool in {(d.driver, d.pool) for d in found}:
                pool_rows.setdefault(pool, []).append(row)
        return _Column(counts, layout, pool_rows, taken.position)
