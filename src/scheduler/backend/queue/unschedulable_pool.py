"""Pods that were found unschedulable, and gated pods, waiting for an event that may help."""

from __future__ import annotations

from collections.abc import Iterator

from scheduler.framework.queued_pod import QueuedPodInfo


class UnschedulablePool:
    """A map from pod key to its queue record; gated pods live here too, counted apart."""

    __slots__ = ("_pods",)

    def __init__(self) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, key: str) -> bool:
        return key in self._pods

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        """A snapshot, so callers may move pods out while iterating."""
        return iter(list(self._pods.values()))

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._pods.get(key)

    def add_or_update(self, info: QueuedPodInfo) -> bool:
        """Store the pod; True if it was not here before."""
        is_new = info.key not in self._pods
        self._pods[info.key] = info
        return is_new

    def delete(self, key: str) -> QueuedPodInfo | None:
        return self._pods.pop(key, None)

    def gated_count(self) -> int:
        return sum(1 for info in self._pods.values() if info.gated)

    def stayed_longer_than(self, seconds: float, now: float) -> list[QueuedPodInfo]:
        """Pods whose last failure (or arrival) is more than `seconds` ago."""
        return [info for info in self._pods.values() if now - info.timestamp > seconds]
