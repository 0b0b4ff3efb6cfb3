"""Backoff: durations by failures, window-aligned expiry, the two heaps, PopFromBackoffQ."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from scheduler.backend.queue import SchedulingQueue
from scheduler.backend.queue.backoff import BackoffPolicy
from scheduler.backend.queue.backoff import BackoffQueue
from scheduler.backend.queue.backoff import align_to_window
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod
from scheduler.testing.fake_clock import FakeClock
from tests.backend.queue.conftest import seconds_until_active


def priority_first(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    return a.pod.priority > b.pod.priority


def info(
    name: str, *, attempts: int, at: float, priority: int = 0, plugin: str = "P"
) -> QueuedPodInfo:
    """A pod whose every attempt failed: rejected by `plugin`, or with an error if it is ""."""
    pod = make_pod(name).priority(priority).obj()
    record = QueuedPodInfo(pod=pod, timestamp=at, attempts=attempts)
    if plugin:
        record.unschedulable_plugins = {plugin}
        record.unschedulable_count = attempts
    else:
        record.consecutive_errors = attempts
    return record


@pytest.mark.parametrize(
    ("attempts", "expected"),
    [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (6, 10.0), (50, 10.0)],
    ids=str,
)
def test_default_duration_doubles_from_one_second_up_to_ten(attempts: int, expected: float) -> None:
    assert BackoffPolicy().duration(attempts) == expected


def test_custom_initial_and_maximum() -> None:
    policy = BackoffPolicy(initial=0.5, maximum=3.0)
    assert [policy.duration(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


@pytest.mark.parametrize(
    ("timestamp", "attempts", "expiration"),
    [
        (1000.0, 1, 1001.0),
        (1000.3, 1, 1001.0),
        (1000.1, 2, 1002.0),
        (1000.9, 4, 1008.0),
        (1000.5, 7, 1010.0),
    ],
)
def test_expiration_is_truncated_to_the_whole_second_window(
    timestamp: float, attempts: int, expiration: float
) -> None:
    record = info("p", attempts=attempts, at=timestamp)
    assert BackoffPolicy().expiration(record) == expiration
    assert record.backoff_expiration == expiration  # cached until the pod is re-queued


def test_never_attempted_pod_is_never_backing_off() -> None:
    record = info("p", attempts=0, at=1000.0)
    policy = BackoffPolicy()
    assert policy.expiration(record) is None
    assert not policy.is_backing_off(record, 1000.0)


def test_pod_backs_off_until_its_expiry_window_has_passed() -> None:
    policy = BackoffPolicy()
    record = info("p", attempts=3, at=1000.2)  # 4 s -> window 1004
    assert policy.is_backing_off(record, 1003.99)
    assert policy.is_backing_off(record, 1004.5)  # still inside the expiry window
    assert not policy.is_backing_off(record, 1005.0)


def test_align_to_window_absorbs_float_noise() -> None:
    assert align_to_window(1000.1 + 0.9) == 1001.0
    assert align_to_window(1001.999) == 1001.0


def test_same_window_is_ordered_by_priority_and_error_pods_stay_apart() -> None:
    now = [1000.0]
    queue = BackoffQueue(BackoffPolicy(), priority_first, lambda: now[0])
    queue.add(info("late-low", attempts=1, at=1000.7, priority=1))
    queue.add(info("early-low", attempts=1, at=1000.1, priority=1))
    queue.add(info("late-high", attempts=1, at=1000.8, priority=9))
    queue.add(info("next-window", attempts=2, at=1000.0, priority=100))
    queue.add(info("error", attempts=1, at=1000.0, plugin=""))
    assert len(queue) == 5 and queue.rejected_len == 4
    order = []
    while (head := queue.pop_rejected_head()) is not None:
        order.append(head.pod.name)
    assert order[0] == "late-high"
    assert set(order[1:3]) == {"late-low", "early-low"}
    assert order[3] == "next-window"
    assert "default/error" in queue  # PopFromBackoffQ never takes error-backoff pods


def test_pop_completed_takes_only_finished_pods_from_both_heaps() -> None:
    now = [1000.0]
    queue = BackoffQueue(BackoffPolicy(), priority_first, lambda: now[0])
    queue.add(info("one", attempts=1, at=1000.0))
    queue.add(info("two", attempts=2, at=1000.0))
    queue.add(info("err", attempts=1, at=1000.0, plugin=""))
    now[0] = 1001.5
    assert queue.pop_completed() == []
    now[0] = 1002.0
    assert sorted(i.pod.name for i in queue.pop_completed()) == ["err", "one"]
    now[0] = 1003.0
    assert [i.pod.name for i in queue.pop_completed()] == ["two"]
    assert len(queue) == 0


def test_add_moves_a_pod_between_heaps_when_its_failure_kind_changes() -> None:
    queue = BackoffQueue(BackoffPolicy(), priority_first, lambda: 1000.0)
    record = info("p", attempts=1, at=1000.0, plugin="")
    queue.add(record)
    assert queue.rejected_len == 0
    record.unschedulable_plugins = {"P"}
    queue.add(record)
    assert queue.rejected_len == 1 and len(queue) == 1


# ----------------------------------------------------------------- through the scheduling queue


def test_failed_pod_waits_out_backoff_then_the_flush_moves_it_to_active(
    make_queue: QueueFactory, fail: Fail, clock: FakeClock
) -> None:
    queue = make_queue(max_backoff=10.0)
    pod = make_pod("p").obj()
    queue.add(pod)
    # An error (no rejecting plugin) always earns backoff; each failure lengthens it.
    waits = []
    for _ in range(6):
        popped = queue.pop()
        assert popped is not None
        fail(queue, popped)  # error: no rejecting plugin -> error backoff
        assert queue.locate(pod.key) == "backoff"
        waits.append(seconds_until_active(queue, pod.key, clock))
    # The whole-second window adds one flush tick to every duration.
    assert waits == [2, 3, 5, 9, 11, 11]


QueueFactory = Callable[..., SchedulingQueue]
Fail = Callable[..., None]
Register = Callable[..., tuple[str, ClusterEventWithHint]]


def test_pop_from_backoff_when_active_is_empty(
    make_queue: QueueFactory, fail: Fail, reg: Register, incoming: list[tuple[str, str]]
) -> None:
    queue = make_queue([reg("P", EventResource.NODE, ActionType.ADD)])
    pods = [make_pod(n).priority(p).obj() for n, p in [("low", 1), ("high", 5), ("err", 9)]]
    for pod in pods:
        queue.add(pod)
    popped = {i.pod.name: i for i in (queue.pop() for _ in range(3)) if i is not None}
    fail(queue, popped["low"], "P")
    fail(queue, popped["high"], "P")
    fail(queue, popped["err"])  # error backoff: never popped early
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    assert queue.pending_counts() == {"active": 0, "backoff": 3, "unschedulable": 0, "gated": 0}
    incoming.clear()
    first, second = queue.pop(), queue.pop()
    assert first is not None and first.pod.name == "high"
    assert second is not None and second.pod.name == "low"
    assert queue.pop() is None
    assert queue.locate(pods[2].key) == "backoff"
    assert incoming == [("active", "PopFromBackoffQ")] * 2


def test_active_pods_are_preferred_over_backoff_pods(
    make_queue: QueueFactory, fail: Fail, reg: Register
) -> None:
    queue = make_queue([reg("P", EventResource.NODE, ActionType.ADD)])
    queue.add(make_pod("a").priority(100).obj())
    popped = queue.pop()
    assert popped is not None
    fail(queue, popped, "P")
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    assert queue.locate("default/a") == "backoff"
    queue.add(make_pod("b").priority(0).obj())
    head = queue.pop()
    assert head is not None and head.pod.name == "b"
    head = queue.pop()
    assert head is not None and head.pod.name == "a"
