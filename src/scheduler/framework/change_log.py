"""Which objects of a store changed, in order, so a reader can catch up on what changed since
it last looked instead of reading every object again."""

from __future__ import annotations

from collections.abc import Sequence

ObjectKey = tuple[str, str]
"""(namespace, name); the namespace is empty for cluster-scoped objects."""

# Entries kept before the log starts over (a reader from before then reads everything). Readers
# look every scheduling cycle, when a few objects have changed at most.
DEFAULT_LIMIT = 20_000


class ChangeLog:
    """A revision that grows by one per change and, once a reader has asked for it, the keys
    of the objects changed (a store nobody reads this way keeps no keys)."""

    __slots__ = ("_count", "_first", "_keys", "_limit", "_tracking")

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._count = 0
        self._tracking = False
        # `_keys[i]` is the change that took the revision from `_first + i` to `_first + i + 1`.
        self._first = 0
        self._keys: list[ObjectKey] = []
        self._limit = limit

    @property
    def revision(self) -> int:
        if not self._tracking:
            self._tracking = True
            self._first = self._count
        return self._count

    def record(self, key: ObjectKey) -> None:
        if self._tracking:
            if len(self._keys) >= self._limit:
                self._first = self._count
                self._keys.clear()
            self._keys.append(key)
        self._count += 1

    def since(self, revision: int) -> Sequence[ObjectKey] | None:
        """Keys changed after `revision` (repeats possible), or None when the log does not
        reach back that far."""
        if not self._tracking or not self._first <= revision <= self._count:
            return None
        return self._keys[revision - self._first :]
