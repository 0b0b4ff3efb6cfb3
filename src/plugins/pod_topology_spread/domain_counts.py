"""Matching pods per topology domain of one constraint.

Domains are the value ids of the constraint's topology key in the node table. Count arrays have
one extra slot at the end that stays 0, so gathering with id -1 (label absent) reads 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Int64Array = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]


class DomainValues:
    """The values of a topology key as the table numbers them, looked up by value on demand."""

    __slots__ = ("_ids", "size", "values")

    def __init__(self, values: Sequence[str]) -> None:
        self.values = values
        # The table only ever appends values; ids at or past `size` are unknown to this cycle.
        self.size = len(values)
        self._ids: dict[str, int] | None = None

    def id_of(self, value: str) -> int:
        """The domain id of `value`, or -1 if the table had no node with it."""
        if self._ids is None:
            self._ids = {v: i for i, v in enumerate(self.values[: self.size])}
        return self._ids.get(value, -1)


def per_domain(
    ids: Int32Array, rows: BoolArray, weights: Int64Array | None, size: int
) -> Int64Array:
    """Sum of `weights` (or 1 per row) over the selected rows, per domain, plus the 0 slot."""
    selected = ids[rows]
    if weights is None:
        counts = np.bincount(selected, minlength=size)
    else:
        counts = np.bincount(selected, weights=weights[rows], minlength=size)
    result = np.zeros(size + 1, dtype=np.int64)
    result[:size] = counts[:size]
    return result
