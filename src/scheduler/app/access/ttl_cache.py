"""A small cache whose entries expire a fixed time after they were stored."""

from __future__ import annotations

from typing import Generic
from typing import TypeVar

from scheduler.framework.clock import Clock

V = TypeVar("V")

# Review answers are keyed by credential or request; bound the table so a flood of distinct
# tokens cannot grow it without limit (the API server's own caches are bounded too).
DEFAULT_MAX_ENTRIES = 4096


class TTLCache(Generic[V]):
    def __init__(self, clock: Clock, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self._clock = clock
        self._max_entries = max_entries
        self._entries: dict[str, tuple[float, V]] = {}

    def get(self, key: str) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if self._clock.now() >= expires:
            del self._entries[key]
            return None
        return value

    def put(self, key: str, value: V, ttl: float) -> None:
        """Store `value` for `ttl` seconds; a TTL of zero or less stores nothing."""
        if ttl <= 0:
            return
        if key not in self._entries and len(self._entries) >= self._max_entries:
            self._evict()
        self._entries[key] = (self._clock.now() + ttl, value)

    def __len__(self) -> int:
        return len(self._entries)

    def _evict(self) -> None:
        now = self._clock.now()
        for key in [k for k, (expires, _) in self._entries.items() if expires <= now]:
            del self._entries[key]
        if len(self._entries) >= self._max_entries:
            # Still full of live entries: drop the oldest stored (dicts keep insertion order).
            del self._entries[next(iter(self._entries))]
