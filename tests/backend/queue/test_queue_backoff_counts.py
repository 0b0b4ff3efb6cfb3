"""What a pod's backoff grows with: its run of errors after an error, otherwise how often plugins
rejected it; never its number of attempts (kube-scheduler's UnschedulableCount and
ConsecutiveErrorsCount)."""

from __future__ import annotations

from collections.abc import Callable

from scheduler.backend.queue import SchedulingQueue
from scheduler.backend.queue.backoff import BackoffPolicy
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.objects.pod import Pod
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod
from scheduler.testing.fake_clock import FakeClock
from tests.backend.queue.conftest import seconds_until_active

QueueFactory = Callable[..., SchedulingQueue]
Fail = Callable[..., None]
Register = Callable[..., tuple[str, ClusterEventWithHint]]

REJECTED = "Rejected"
ERROR = "Error"


def _seconds_in_backoff(
    queue: SchedulingQueue, fail: Fail, clock: FakeClock, pod: Pod, outcome: str
) -> int:
    """Pop the pod, fail its attempt, and count the one-second flushes until it is active again.

    A rejected pod waits in the unschedulable pool until an event its rejector registered (a
    node add here) sends it to backoffQ; the event comes at once, so the wait is its backoff.
    """
    popped = queue.pop()
    assert popped is not None and popped.pod.key == pod.key
    if outcome == REJECTED:
        fail(queue, popped, "P")
        queue.node_event(NODE_ADD, None, make_node("n").obj())
    else:
        fail(queue, popped)
    assert queue.locate(pod.key) == "backoff"
    return seconds_until_active(queue, pod.key, clock)


def test_errors_and_rejections_are_counted_apart(
    make_queue: QueueFactory, fail: Fail, reg: Register, clock: FakeClock
) -> None:
    queue = make_queue([reg("P", EventResource.NODE, ActionType.ADD)])
    pod = make_pod("p").obj()
    queue.add(pod)
    outcomes = [REJECTED, REJECTED, REJECTED, ERROR, ERROR, REJECTED]
    waits = [_seconds_in_backoff(queue, fail, clock, pod, outcome) for outcome in outcomes]
    # Backoffs of 1, 2 and 4 s for three rejections; the first error starts its own count at
    # 1 s and the second doubles it; the next rejection resumes the rejection count (the
    # fourth: 8 s). The whole-second window adds one flush tick to each.
    assert waits == [2, 3, 5, 2, 3, 9]


def _record(*, attempts: int, rejections: int, errors: int) -> QueuedPodInfo:
    return QueuedPodInfo(
        pod=make_pod("p").obj(),
        timestamp=1000.0,
        attempts=attempts,
        unschedulable_count=rejections,
        consecutive_errors=errors,
    )


def test_a_pod_attempted_but_never_failed_is_not_backing_off() -> None:
    record = _record(attempts=3, rejections=0, errors=0)
    policy = BackoffPolicy()
    assert policy.expiration(record) is None
    assert not policy.is_backing_off(record, 1000.0)


def test_an_error_after_rejections_backs_off_by_the_errors_alone() -> None:
    record = _record(attempts=4, rejections=3, errors=1)
    assert BackoffPolicy().expiration(record) == 1001.0


def test_rejections_set_the_backoff_when_the_last_attempt_was_no_error() -> None:
    record = _record(attempts=6, rejections=2, errors=0)
    assert BackoffPolicy().expiration(record) == 1002.0
