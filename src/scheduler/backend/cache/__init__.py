"""The scheduler cache: NodeInfos, the node table, and assumed pods."""

from scheduler.backend.cache.cache import SchedulerCache
from scheduler.backend.cache.errors import CacheError

__all__ = ["CacheError", "SchedulerCache"]
