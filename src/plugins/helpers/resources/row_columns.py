"""One-dimensional table columns aligned with the rows a batch form was given.

The executor usually hands a batch form every row of the table in order (every node filtered
and scored); the columns are then read-only views of the table, so nothing is copied. For any
other selection of rows the values are gathered. Only the columns a check or a score needs are
read, never the whole (rows x resources) matrices.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.framework import NodeTable
from scheduler.framework import Rows

Vector = npt.NDArray[np.int64]


def covers_every_row(table: NodeTable, rows: Rows) -> bool:
    """Whether `rows` is exactly 0 .. size-1 in order.

    The constant-time tests reject subsets and rotated windows at once; the final comparison
    (one pass over `rows`) makes the answer exact for any input, permutations included.
    """
    if table.covers(rows):
        return True
    size = table.size
    if len(rows) != size:
        return False
    if size < 2:
        return size == 0 or int(rows[0]) == 0
    if int(rows[0]) != 0 or int(rows[-1]) != size - 1:
        return False
    return bool(np.less(rows[:-1], rows[1:]).all())


class RowColumns:
    """Reads table columns for one selection of rows."""

    __slots__ = ("_rows", "_table", "count", "every_row")

    def __init__(self, table: NodeTable, rows: Rows) -> None:
        self._table = table
        self._rows = rows
        self.count = len(rows)
        self.every_row = covers_every_row(table, rows)

    def of(self, values: Vector) -> Vector:
        """`values` (indexed by table row) at the selected rows. Never write into the result:
        it may be a view of the table."""
        if self.every_row:
            view = values[: self.count]
            view.flags.writeable = False
            return view
        gathered: Vector = values[self._rows]
        return gathered

    def allocatable(self, column: int) -> Vector:
        return self.of(self._table.allocatable[:, column])

    def requested(self, column: int) -> Vector:
        return self.of(self._table.requested[:, column])

    def non_zero_requested(self, index: int) -> Vector:
        """Usage with upstream's non-zero defaults: index 0 is cpu, 1 is memory."""
        return self.of(self._table.non_zero_requested[:, index])

    def pod_count(self) -> Vector:
        return self.of(self._table.pod_count)

    def allowed_pods(self) -> Vector:
        return self.of(self._table.allowed_pods)
