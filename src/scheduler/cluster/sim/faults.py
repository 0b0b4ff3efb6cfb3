"""Injected API failures: `fail_next(verb, resource, error)` makes the next such call raise."""

from __future__ import annotations

from collections import defaultdict
from collections import deque

from scheduler.framework.errors import APIError

# Verbs as the API server's audit log names them, plus "bind" for pods/binding.
VERBS = frozenset({"list", "watch", "get", "create", "update", "delete", "patch", "bind"})


class FaultInjector:
    def __init__(self) -> None:
        self._pending: defaultdict[tuple[str, str], deque[APIError]] = defaultdict(deque)

    def fail_next(self, verb: str, resource: str, error: APIError) -> None:
        """Queue `error` for the next `verb` on `resource`; several queue up in order."""
        if verb not in VERBS:
            raise ValueError(f"unknown verb {verb!r}; expected one of {sorted(VERBS)}")
        self._pending[(verb, resource)].append(error)

    def check(self, verb: str, resource: str) -> None:
        """Raise the next queued error for this call, if any."""
        queued = self._pending.get((verb, resource))
        if queued:
            raise queued.popleft()

    @property
    def pending(self) -> int:
        return sum(len(q) for q in self._pending.values())
