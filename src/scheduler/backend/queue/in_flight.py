"""Pods being scheduled, and the cluster events that arrived while they were.

A pod popped for scheduling may come back unschedulable after an event that would have
helped it already went by. Every event received while any pod is in flight is logged; when a
pod returns, the events logged after its pop are replayed through the hints, so none is lost.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass
from typing import Any

from scheduler.backend.queue.cluster_events import event_label
from scheduler.framework.events import ClusterEvent
from scheduler.objects.pod import Pod

# The label kube-scheduler's `scheduler_inflight_events` gives the pods themselves.
POD_POPPED = "PodPopped"


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    event: ClusterEvent
    old: Any
    new: Any


def pod_identity(pod: Pod) -> str:
    return pod.uid or pod.key


class InFlightLog:
    """Popped pods by uid, with one shared, ordered log of the events seen since."""

    __slots__ = ("_events", "_labels", "_pods", "_sequence")

    def __init__(self) -> None:
        self._sequence = itertools.count()
        # uid -> (sequence number at pop, pod as popped). Insertion order is pop order, so the
        # first entry is always the oldest pod still in flight.
        self._pods: dict[str, tuple[int, Pod]] = {}
        self._events: deque[tuple[int, RecordedEvent]] = deque()
        # Every event label ever logged: upstream's gauge has a series for each, at 0 once
        # the events are gone, however soon they went.
        self._labels: set[str] = set()

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: str) -> bool:
        return uid in self._pods

    @property
    def event_count(self) -> int:
        return len(self._events)

    def pods(self) -> list[Pod]:
        return [pod for _, pod in self._pods.values()]

    def counts_by_label(self) -> dict[str, int]:
        """Pods in flight (as `PodPopped`) and the events kept for them, by event label: what
        upstream's in-flight list holds. Computed when asked, for a scrape."""
        counts: dict[str, int] = {POD_POPPED: len(self._pods)} if self._pods else {}
        for _, recorded in self._events:
            label = event_label(recorded.event)
            counts[label] = counts.get(label, 0) + 1
        return counts

    def start(self, pod: Pod) -> bool:
        """Mark the pod in flight; False if it already was."""
        uid = pod_identity(pod)
        if uid in self._pods:
            return False
        self._pods[uid] = (next(self._sequence), pod)
        return True

    def record(self, event: ClusterEvent, old: Any, new: Any) -> bool:
        """Log an event if some pod is in flight to care about it."""
        if not self._pods:
            return False
        self._append(event, old, new)
        return True

    def _append(self, event: ClusterEvent, old: Any, new: Any) -> None:
        self._events.append((next(self._sequence), RecordedEvent(event, old, new)))
        self._labels.add(event_label(event))

    @property
    def labels_logged(self) -> frozenset[str]:
        """The label of every event ever logged (see `counts_by_label`)."""
        return frozenset(self._labels)

    def record_for_pod(self, pod: Pod, events: list[ClusterEvent], old: Any, new: Any) -> bool:
        """Log events about `pod` itself if it is in flight; True if it is."""
        if pod_identity(pod) not in self._pods:
            return False
        for event in events:
            self._append(event, old, new)
        return True

    def events_since_pop(self, pod: Pod) -> list[RecordedEvent] | None:
        """Events logged after `pod` was popped; None if it is not in flight."""
        entry = self._pods.get(pod_identity(pod))
        if entry is None:
            return None
        popped_at = entry[0]
        return [recorded for seq, recorded in self._events if seq > popped_at]

    def done(self, pod: Pod) -> None:
        """End tracking; drop the events no remaining in-flight pod can still need."""
        if self._pods.pop(pod_identity(pod), None) is None:
            return
        if not self._pods:
            self._events.clear()
            return
        oldest = next(iter(self._pods.values()))[0]
        while self._events and self._events[0][0] < oldest:
            self._events.popleft()

    def clear(self) -> None:
        self._pods.clear()
        self._events.clear()
