"""The backoff queue: pods that failed an attempt and wait out a penalty before retrying.

Two heaps, as upstream keeps them: pods rejected by plugins, and pods that failed with an
error (no rejecting plugin). Only the first may be popped early when activeQ is empty
(PopFromBackoffQ), so an error storm never jumps the penalty meant to protect the API server.

Expiry times are truncated to whole-second windows; within one window the plugin-rejected
heap orders by the QueueSort `less`, so a burst of pods whose backoff ends together comes out
in priority order. A pod is still backing off while its window is not yet in the past.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Iterator

from scheduler.backend.queue.heap import KeyedHeap
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.objects.pod import Pod

ORDERING_WINDOW = 1.0
"""Seconds per backoff ordering window; also the period of the backoff flush."""

# Float sums such as 1000.1 + 0.9 may land a hair below the whole second they mean.
_WINDOW_EPSILON = 1e-9


def align_to_window(seconds: float) -> float:
    """The start of the ordering window holding `seconds`."""
    return math.floor(seconds / ORDERING_WINDOW + _WINDOW_EPSILON) * ORDERING_WINDOW


def failures_counted(info: QueuedPodInfo) -> int:
    """The failures a pod's backoff grows with, as upstream counts them.

    A pod whose latest attempt failed with an error backs off by its run of consecutive errors;
    otherwise by how often plugins found it unschedulable. Counting the two apart, rather than
    counting attempts, keeps a passing error (an API server hiccup, say) from inheriting the long
    penalty that earlier rejections earned, and from lengthening the next one.
    """
    if info.consecutive_errors > 0:
        return info.consecutive_errors
    return info.unschedulable_count


class BackoffPolicy:
    """Exponential backoff by failures: initial x 2^(failures-1), capped at max."""

    __slots__ = ("initial", "maximum")

    def __init__(self, initial: float = 1.0, maximum: float = 10.0) -> None:
        self.initial = initial
        self.maximum = maximum

    def duration(self, failures: int) -> float:
        if failures <= 0:
            # A pod that never failed owes no penalty.
            return 0.0
        duration = self.initial
        for _ in range(failures - 1):
            duration *= 2
            if duration >= self.maximum:
                return self.maximum
        return min(duration, self.maximum)

    def expiration(self, info: QueuedPodInfo) -> float | None:
        """Window-aligned end of the pod's backoff, cached on the info until it is re-queued.

        None for a pod that has not failed yet: it is never backing off.
        """
        failures = failures_counted(info)
        if failures == 0:
            return None
        if info.backoff_expiration is None:
            info.backoff_expiration = align_to_window(info.timestamp + self.duration(failures))
        return info.backoff_expiration

    def is_backing_off(self, info: QueuedPodInfo, now: float) -> bool:
        expiration = self.expiration(info)
        return expiration is not None and expiration >= align_to_window(now)


def _has_rejectors(info: QueuedPodInfo) -> bool:
    return bool(info.unschedulable_plugins or info.pending_plugins)


class BackoffQueue:
    """Plugin-rejected and error backoff heaps behind one interface."""

    __slots__ = ("_clock_now", "_errors", "_policy", "_rejected")

    def __init__(
        self,
        policy: BackoffPolicy,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        now: Callable[[], float],
    ) -> None:
        self._policy = policy
        self._clock_now = now

        def sort_key(info: QueuedPodInfo) -> float:
            expiration = policy.expiration(info)
            return -math.inf if expiration is None else expiration

        def by_expiry_then_priority(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
            ea, eb = sort_key(a), sort_key(b)
            if ea != eb:
                return ea < eb
            return less(a, b)

        def by_expiry(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
            return sort_key(a) < sort_key(b)

        self._rejected: KeyedHeap[QueuedPodInfo] = KeyedHeap(_key, by_expiry_then_priority)
        self._errors: KeyedHeap[QueuedPodInfo] = KeyedHeap(_key, by_expiry)

    @property
    def policy(self) -> BackoffPolicy:
        return self._policy

    def __len__(self) -> int:
        return len(self._rejected) + len(self._errors)

    def __contains__(self, key: str) -> bool:
        return key in self._rejected or key in self._errors

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        yield from self._rejected
        yield from self._errors

    @property
    def rejected_len(self) -> int:
        """Pods eligible for PopFromBackoffQ."""
        return len(self._rejected)

    def is_backing_off(self, info: QueuedPodInfo) -> bool:
        return self._policy.is_backing_off(info, self._clock_now())

    def add(self, info: QueuedPodInfo) -> None:
        """File the pod in the heap its failure kind belongs to (and only there)."""
        key = info.key
        if _has_rejectors(info):
            self._errors.delete(key)
            self._rejected.add_or_update(info)
        else:
            self._rejected.delete(key)
            self._errors.add_or_update(info)

    def get(self, key: str) -> QueuedPodInfo | None:
        info = self._rejected.get(key)
        return info if info is not None else self._errors.get(key)

    def update(self, key: str, pod: Pod) -> QueuedPodInfo | None:
        """Swap in the new pod object in place (its priority may have changed)."""
        for heap in (self._rejected, self._errors):
            info = heap.get(key)
            if info is not None:
                info.pod = pod
                heap.add_or_update(info)
                return info
        return None

    def delete(self, key: str) -> QueuedPodInfo | None:
        info = self._rejected.delete(key)
        return info if info is not None else self._errors.delete(key)

    def pop_rejected_head(self) -> QueuedPodInfo | None:
        """PopFromBackoffQ: the next plugin-rejected pod, whether or not its backoff ended."""
        return self._rejected.pop()

    def pop_completed(self) -> list[QueuedPodInfo]:
        """Remove and return every pod whose backoff is over, from both heaps."""
        now = self._clock_now()
        done: list[QueuedPodInfo] = []
        for heap in (self._rejected, self._errors):
            while True:
                head = heap.peek()
                if head is None or self._policy.is_backing_off(head, now):
                    break
                heap.pop()
                done.append(head)
        return done


def _key(info: QueuedPodInfo) -> str:
    return info.key
