"""The error the cache raises when asked to do something its state does not allow."""

from __future__ import annotations

from scheduler.framework.errors import SchedulerError


class CacheError(SchedulerError):
    """An assume/forget that contradicts what the cache holds (a bug in the caller)."""
