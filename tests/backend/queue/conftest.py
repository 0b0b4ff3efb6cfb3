"""Fixtures for the scheduling-queue tests: a fake clock, a recording observer, a factory."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pytest

from scheduler.backend.queue import SchedulingQueue
from scheduler.backend.queue.gating import PreEnqueue
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.events import QueueingHint
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.testing.fake_clock import FakeClock

PROFILE = "default-scheduler"
GATES = "SchedulingGates"


def seconds_until_active(queue: SchedulingQueue, key: str, clock: FakeClock) -> int:
    """Advance the clock a second at a time, flushing backoffQ, until the pod in backoff is
    active again; the number of seconds it took."""
    waited = 0
    while queue.locate(key) == "backoff":
        clock.advance(1.0)
        waited += 1
        queue.flush_backoff_completed()
    assert queue.locate(key) == "active"
    return waited


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort: higher priority first, then the earlier timestamp."""
    if a.pod.priority != b.pod.priority:
        return a.pod.priority > b.pod.priority
    return a.timestamp < b.timestamp


def gates_pre_enqueue(pod: Pod, gating_plugin: str) -> Status:
    """A PreEnqueue like SchedulingGates: a pod with gates waits."""
    if pod.scheduling_gates:
        return Status.unresolvable(
            f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]"
        ).with_plugin(GATES)
    return SUCCESS


def gates_eliminated(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if isinstance(new, Pod) and new.uid == pod.uid and not new.scheduling_gates:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


GATES_REGISTRATION = (
    GATES,
    ClusterEventWithHint(
        ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
        gates_eliminated,
    ),
)

Registrations = Sequence[tuple[str, ClusterEventWithHint]]


class RecordingObserver:
    def __init__(self) -> None:
        self.incoming: list[tuple[str, str]] = []
        # (plugin, event, hint) of every QueueingHint called, in order.
        self.hints: list[tuple[str, str, str]] = []

    def pod_incoming(self, queue: str, event: str) -> None:
        self.incoming.append((queue, event))

    def queueing_hint_duration(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        assert seconds >= 0
        self.hints.append((plugin, event, hint))


QueueFactory = Callable[..., SchedulingQueue]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1000.0)


@pytest.fixture
def observer() -> RecordingObserver:
    return RecordingObserver()


@pytest.fixture
def incoming(observer: RecordingObserver) -> list[tuple[str, str]]:
    """(queue, event) of every pod that entered a sub-queue, in order."""
    return observer.incoming


@pytest.fixture
def make_queue(clock: FakeClock, observer: RecordingObserver) -> QueueFactory:
    def factory(
        registrations: Registrations = (GATES_REGISTRATION,),
        *,
        profiles: Mapping[str, Registrations] | None = None,
        pre_enqueue: PreEnqueue = gates_pre_enqueue,
        **kwargs: Any,
    ) -> SchedulingQueue:
        return SchedulingQueue(
            less=priority_less,
            clock=clock,
            pre_enqueue=pre_enqueue,
            hints=profiles if profiles is not None else {PROFILE: registrations},
            observer=observer,
            **kwargs,
        )

    return factory


Fail = Callable[..., None]


@pytest.fixture
def fail() -> Fail:
    """Return a popped pod as the scheduling cycle does after a failed attempt."""

    def give_back(
        queue: SchedulingQueue,
        info: QueuedPodInfo,
        *unschedulable: str,
        pending: Sequence[str] = (),
    ) -> None:
        info.unschedulable_plugins = set(unschedulable)
        info.pending_plugins = set(pending)
        queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)

    return give_back


Register = Callable[..., tuple[str, ClusterEventWithHint]]


@pytest.fixture
def reg() -> Register:
    """reg(plugin, resource, action, hint=None) -> a (plugin, registration) pair."""

    def register(
        plugin: str,
        resource: EventResource,
        action: ActionType,
        hint: Callable[[Pod, Any, Any], QueueingHint] | None = None,
    ) -> tuple[str, ClusterEventWithHint]:
        return plugin, ClusterEventWithHint(ClusterEvent(resource, action), hint)

    return register
