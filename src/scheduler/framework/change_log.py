"""Which objects of a store changed, in order, so a reader can catch up on what changed since
it last looked instead of reading every object again."""

from __future__ import annotations

from collections.abc import Sequence

ObjectKey = tuple[str, str]
"""(namespace, name); the namespace is empty for cluster-scoped objects."""

# Entries kept before the log starts over (a reader from before then reads everything).
DEFAULT_LIMIT = 100_000


class ChangeLog:
    """The keys of changed objects, with a revision that grows by one per change."""

    __slots__ = ("_base", "_keys", "_limit")

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._keys: list[ObjectKey] = []
        self._base = 0
        self._limit = limit

    @property
    def revision(self) -> int:
        return self._base + len(self._keys)

    def record(self, key: ObjectKey) -> None:
        if len(self._keys) >= self._limit:
            self._base += len(self._keys)
            self._keys.clear()
        self._keys.append(key)

    def since(self, revision: int) -> Sequence[ObjectKey] | None:
        """Keys changed after `revision` (repeats possible), or None when the log no longer
        reaches back that far."""
        if revision < self._base or revision > self.revision:
            return None
        return self._keys[revision - self._base :]
