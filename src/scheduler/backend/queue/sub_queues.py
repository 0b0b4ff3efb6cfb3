"""Where a pending pod sits (activeQ, backoffQ, unschedulable pool) and how it moves between them.

This is the queue's state machine without the event logic: PreEnqueue is enforced on entry to
activeQ and backoffQ, a gated pod lands in the pool instead, and every arrival is reported to
the observer with the event that caused it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import Protocol

from scheduler.backend.queue.backoff import BackoffPolicy
from scheduler.backend.queue.backoff import BackoffQueue
from scheduler.backend.queue.gating import PreEnqueue
from scheduler.backend.queue.gating import run_pre_enqueue
from scheduler.backend.queue.heap import KeyedHeap
from scheduler.backend.queue.hints import QueueingStrategy
from scheduler.backend.queue.observer import ACTIVE
from scheduler.backend.queue.observer import BACKOFF
from scheduler.backend.queue.observer import GATED
from scheduler.backend.queue.observer import UNSCHEDULABLE
from scheduler.backend.queue.observer import QueueObserver
from scheduler.backend.queue.unschedulable_pool import UnschedulablePool
from scheduler.framework.queued_pod import QueuedPodInfo

LessFunc = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
# A QueueSort plugin's `sort_key`: values whose `<` agrees with its `less`.
RankFunc = Callable[[QueuedPodInfo], Any]


class _PodStore(Protocol):
    """What activeQ, backoffQ and the unschedulable pool each are: pods by key."""

    def __contains__(self, key: str) -> bool: ...

    def get(self, key: str) -> QueuedPodInfo | None: ...

    def delete(self, key: str) -> QueuedPodInfo | None: ...


def _info_key(info: QueuedPodInfo) -> str:
    return info.key


class SubQueues:
    __slots__ = ("_now", "_observer", "_parts", "_pre_enqueue", "active", "backoff", "pool")

    def __init__(
        self,
        *,
        less: LessFunc,
        rank: RankFunc | None = None,
        now: Callable[[], float],
        pre_enqueue: PreEnqueue,
        backoff: BackoffPolicy,
        observer: QueueObserver,
    ) -> None:
        self._now = now
        self._pre_enqueue = pre_enqueue
        self._observer = observer
        self.active: KeyedHeap[QueuedPodInfo] = KeyedHeap(_info_key, less, rank)
        self.backoff = BackoffQueue(backoff, less, now)
        self.pool = UnschedulablePool()
        # In the order a pod is looked for: activeQ, backoffQ, then the pool.
        self._parts: tuple[_PodStore, ...] = (self.active, self.backoff, self.pool)

    def __contains__(self, key: str) -> bool:
        return key in self.active or key in self.backoff or key in self.pool

    def get(self, key: str) -> QueuedPodInfo | None:
        part = self._holder(key)
        return None if part is None else part.get(key)

    def _holder(self, key: str) -> _PodStore | None:
        """The part the pod is in (one at most), None if it is in none."""
        for part in self._parts:
            if key in part:
                return part
        return None

    def locate(self, key: str) -> str:
        """active, backoff, unschedulable, gated, or "" when the pod is in none of them."""
        if key in self.active:
            return ACTIVE
        if key in self.backoff:
            return BACKOFF
        info = self.pool.get(key)
        if info is None:
            return ""
        return GATED if info.gated else UNSCHEDULABLE

    def delete(self, key: str) -> QueuedPodInfo | None:
        part = self._holder(key)
        return None if part is None else part.delete(key)

    def all(self) -> list[QueuedPodInfo]:
        return [*self.active, *self.backoff, *self.pool]

    def counts(self) -> dict[str, int]:
        gated = self.pool.gated_count()
        return {
            ACTIVE: len(self.active),
            BACKOFF: len(self.backoff),
            UNSCHEDULABLE: len(self.pool) - gated,
            GATED: gated,
        }

    def move_to_active(self, info: QueuedPodInfo, event: str, from_backoff: bool = False) -> bool:
        """Put the pod in activeQ if PreEnqueue lets it; a gated pod goes to the pool instead.

        PreEnqueue already ran when the pod entered backoffQ, so it is not repeated from there.
        """
        if not from_backoff:
            run_pre_enqueue(self._pre_enqueue, info)
        key = info.key
        if info.gated:
            if key not in self:
                self.add_to_pool(info, event)
            return False
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self._now()
        self.pool.delete(key)
        self.backoff.delete(key)
        self.active.add_or_update(info)
        self._observer.pod_incoming(ACTIVE, event)
        return True

    def move_to_backoff(self, info: QueuedPodInfo, event: str) -> bool:
        # PreEnqueue runs on entry to backoffQ because PopFromBackoffQ may hand the pod out
        # from there directly.
        if not run_pre_enqueue(self._pre_enqueue, info):
            if info.key not in self.pool:
                self.add_to_pool(info, event)
            return False
        self.pool.delete(info.key)
        self.backoff.add(info)
        self._observer.pod_incoming(BACKOFF, event)
        return True

    def add_to_pool(self, info: QueuedPodInfo, event: str) -> None:
        # Upstream counts every arrival in the pool, gated or not, as queue="unschedulable";
        # only the pending-pods gauge (`counts`) tells gated pods apart.
        if self.pool.add_or_update(info):
            self._observer.pod_incoming(UNSCHEDULABLE, event)

    def requeue(self, info: QueuedPodInfo, strategy: QueueingStrategy, event: str) -> str:
        """Route the pod per `strategy`; returns the sub-queue it ended up in."""
        if strategy is QueueingStrategy.SKIP:
            self.add_to_pool(info, event)
            return UNSCHEDULABLE
        if strategy is QueueingStrategy.AFTER_BACKOFF and self.backoff.is_backing_off(info):
            return BACKOFF if self.move_to_backoff(info, event) else UNSCHEDULABLE
        return ACTIVE if self.move_to_active(info, event) else UNSCHEDULABLE
