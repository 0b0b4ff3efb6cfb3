"""Values derived from one node table, each kept while the table state it was built from holds.

Unlike `RowMemo`, which refreshes single rows, a value here is rebuilt whole: it is valid as
long as its validity key (version counters of the table or of the plugin's own data) is the
one it was built under. A different table makes every value stale.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from collections.abc import Hashable
from typing import Generic
from typing import TypeVar

from scheduler.framework import NodeTable

V = TypeVar("V")


class TableMemo(Generic[V]):
    """Values by question, for one table at a time; at most `limit` questions (all are
    forgotten when a new one would pass it), or any number with None."""

    def __init__(self, limit: int | None = None) -> None:
        self._limit = limit
        self._entries: dict[Hashable, tuple[Hashable, V]] = {}
        self._table: weakref.ref[NodeTable] | None = None

    def get(
        self, table: NodeTable, question: Hashable, validity: Hashable, build: Callable[[], V]
    ) -> V:
        """The value for `question` built under `validity`, built now with `build()` if the
        remembered one was built under another key, for another table, or never."""
        if self._table is None or self._table() is not table:
            self._entries.clear()
            self._table = weakref.ref(table)
        cached = self._entries.get(question)
        if cached is not None and cached[0] == validity:
            return cached[1]
        value = build()
        if self._limit is not None and len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[question] = (validity, value)
        return value
