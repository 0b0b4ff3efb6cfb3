"""Selections of table rows a batch form may be given, drawn by hypothesis.

Batch forms read views of the table when given every row in order and gather otherwise; these
draws cover both: every row, a sorted subset (what the executor passes after earlier filters),
a rotation (the executor's rotating start), an arbitrary permutation, and a permutation that
keeps the first and last rows in place (which only looks like every row in order).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from scheduler.framework import Rows

SELECTIONS = ("every row", "sorted subset", "rotation", "permutation", "shuffled inside")


def draw_rows(data: st.DataObject, size: int) -> Rows:
    kind = data.draw(st.sampled_from(SELECTIONS), label="rows")
    every = np.arange(size, dtype=np.int64)
    if kind == "every row" or size == 0:
        return every
    if kind == "sorted subset":
        keep = data.draw(st.lists(st.booleans(), min_size=size, max_size=size), label="keep")
        return every[np.asarray(keep, dtype=np.bool_)]
    if kind == "rotation":
        return np.roll(every, -data.draw(st.integers(0, size - 1), label="start"))
    if kind == "permutation" or size < 3:
        order = data.draw(st.permutations(range(size)), label="order")
        return np.asarray(order, dtype=np.int64)
    inside = data.draw(st.permutations(range(1, size - 1)), label="inside")
    return np.asarray([0, *inside, size - 1], dtype=np.int64)
