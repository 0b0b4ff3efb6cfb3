"""A binary heap keyed by pod, with a caller-supplied order and O(log n) update and delete.

`heapq` cannot take a comparison function, nor remove or re-sift an arbitrary entry; the queue
needs all three (a pod's priority changes on update, a deleted pod leaves from the middle).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from typing import Any
from typing import Generic
from typing import TypeVar

T = TypeVar("T")


class KeyedHeap(Generic[T]):
    """Items unique by `key(item)`; `less(a, b)` is True when `a` must come out before `b`.

    With `rank`, a value per item whose `<` agrees with `less` exactly, items are compared by
    their ranks (taken when an item is added or updated) instead of calling `less`. `rank` is
    a plugin's code: if taking or comparing a rank ever raises, the heap stops ranking, orders
    what it holds again by `less` (which must not raise), and keeps to `less` from then on.
    """

    __slots__ = ("_index", "_items", "_key", "_keys", "_less", "_rank", "_ranks")

    def __init__(
        self,
        key: Callable[[T], str],
        less: Callable[[T, T], bool],
        rank: Callable[[T], Any] | None = None,
    ) -> None:
        self._key = key
        self._less = less
        self._rank = rank
        self._ranks: list[Any] | None = None if rank is None else []
        self._items: list[T] = []
        # The key of each item, position for position: a swap moves keys without asking
        # `key` again (a pod's key is formatted anew on every read).
        self._keys: list[str] = []
        self._index: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[T]:
        """Items in storage order (not sorted)."""
        return iter(list(self._items))

    def get(self, key: str) -> T | None:
        position = self._index.get(key)
        return None if position is None else self._items[position]

    def peek(self) -> T | None:
        return self._items[0] if self._items else None

    def add_or_update(self, item: T) -> None:
        """Insert `item`, or replace the item with the same key and restore the order."""
        key = self._key(item)
        position = self._index.get(key)
        rank = self._rank_of(item)
        if position is None:
            self._items.append(item)
            self._keys.append(key)
            if self._ranks is not None:
                self._ranks.append(rank)
            self._index[key] = len(self._items) - 1
            self._sift_up(len(self._items) - 1)
            return
        self._items[position] = item
        if self._ranks is not None:
            self._ranks[position] = rank
        self._fix(position)

    def _rank_of(self, item: T) -> Any:
        if self._ranks is None or self._rank is None:
            return None
        try:
            return self._rank(item)
        except Exception:
            self._stop_ranking()
            return None

    def _stop_ranking(self) -> None:
        """From now on `less` orders the heap; what it holds is put back in that order."""
        self._rank = None
        self._ranks = None
        for position in reversed(range(len(self._items) // 2)):
            self._sift_down(position)

    def pop(self) -> T | None:
        if not self._items:
            return None
        return self._remove_at(0)

    def delete(self, key: str) -> T | None:
        position = self._index.get(key)
        return None if position is None else self._remove_at(position)

    def _remove_at(self, position: int) -> T:
        last = len(self._items) - 1
        if position != last:
            self._swap(position, last)
        item = self._items.pop()
        del self._index[self._keys.pop()]
        if self._ranks is not None:
            self._ranks.pop()
        if position < len(self._items):
            self._fix(position)
        return item

    def _fix(self, position: int) -> None:
        if not self._sift_down(position):
            self._sift_up(position)

    def _swap(self, i: int, j: int) -> None:
        items, keys, ranks = self._items, self._keys, self._ranks
        items[i], items[j] = items[j], items[i]
        keys[i], keys[j] = keys[j], keys[i]
        if ranks is not None:
            ranks[i], ranks[j] = ranks[j], ranks[i]
        self._index[keys[i]] = i
        self._index[keys[j]] = j

    def _before(self, i: int, j: int) -> bool:
        """Whether the item at position i must come out before the one at j."""
        ranks = self._ranks
        if ranks is not None:
            try:
                return bool(ranks[i] < ranks[j])
            except Exception:
                self._stop_ranking()
        return self._less(self._items[i], self._items[j])

    def _sift_up(self, position: int) -> None:
        while position > 0:
            parent = (position - 1) // 2
            if not self._before(position, parent):
                return
            self._swap(position, parent)
            position = parent

    def _sift_down(self, position: int) -> bool:
        """Move the item down; True if it moved."""
        start = position
        size = len(self._items)
        while True:
            child = 2 * position + 1
            if child >= size:
                break
            right = child + 1
            if right < size and self._before(right, child):
                child = right
            if not self._before(child, position):
                break
            self._swap(position, child)
            position = child
        return position != start
