"""What the scheduling cycle, the binding cycle and the failure handler all work with."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.backend.cache import SchedulerCache
from scheduler.backend.queue import SchedulingQueue
from scheduler.core.event_recorder import EventRecorder
from scheduler.framework.clock import Clock
from scheduler.observability import SchedulerMetrics


@dataclass(frozen=True, slots=True)
class CycleServices:
    """The scheduler's cache, queue, Event recorder, metrics and clock, handed to each part of
    the cycle once instead of one by one."""

    cache: SchedulerCache
    queue: SchedulingQueue
    recorder: EventRecorder
    metrics: SchedulerMetrics
    clock: Clock


class CyclePart:
    """A part of the cycle: it keeps each of the services as an attribute of its own, so the
    per-pod code reads `self._cache` and not `self._services.cache`."""

    def __init__(self, services: CycleServices) -> None:
        self._cache = services.cache
        self._queue = services.queue
        self._recorder = services.recorder
        self._metrics = services.metrics
        self._clock = services.clock
