"""The main path: ordering, pop, failed attempts, the leftover flush, counts and observer labels."""

from __future__ import annotations

from collections.abc import Callable

from scheduler.backend.queue import SchedulingQueue
from scheduler.framework.events import ClusterEventWithHint
from scheduler.testing.builders import make_pod
from scheduler.testing.fake_clock import FakeClock

QueueFactory = Callable[..., SchedulingQueue]
Fail = Callable[..., None]
Register = Callable[..., tuple[str, ClusterEventWithHint]]


def drain_names(queue: SchedulingQueue) -> list[str]:
    names = []
    while (info := queue.pop()) is not None:
        names.append(info.pod.name)
    return names


def test_higher_priority_first_then_first_come(make_queue: QueueFactory, clock: FakeClock) -> None:
    queue = make_queue()
    for name, priority in [("low-1", 0), ("high", 100), ("low-2", 0), ("mid", 50), ("low-3", 0)]:
        queue.add(make_pod(name).priority(priority).obj())
        clock.advance(0.1)
    assert drain_names(queue) == ["high", "mid", "low-1", "low-2", "low-3"]


def test_pop_counts_attempts_and_cycles_and_tracks_the_pod_in_flight(
    make_queue: QueueFactory, clock: FakeClock
) -> None:
    queue = make_queue()
    pod = make_pod("p").obj()
    queue.add(pod)
    assert queue.scheduling_cycle == 0
    info = queue.pop()
    assert info is not None
    assert (info.attempts, queue.scheduling_cycle) == (1, 1)
    assert info.initial_attempt_timestamp == 1000.0
    assert queue.locate(pod.key) == "in-flight"
    assert queue.in_flight_pods() == [pod]
    assert queue.pop() is None
    queue.done(pod)
    assert queue.locate(pod.key) == ""
    assert queue.in_flight_pods() == []


def test_pop_clears_the_previous_attempts_rejectors(make_queue: QueueFactory, fail: Fail) -> None:
    queue = make_queue()
    queue.add(make_pod("p").obj())
    info = queue.pop()
    assert info is not None
    fail(queue, info, "NodeResourcesFit", pending=["DynamicResources"])
    queue.activate([info.pod])
    again = queue.pop()
    assert again is info
    assert (again.attempts, again.unschedulable_plugins, again.pending_plugins) == (2, set(), set())


def test_failure_kinds_update_the_counters_and_pick_the_sub_queue(
    make_queue: QueueFactory, fail: Fail, clock: FakeClock
) -> None:
    queue = make_queue()
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    clock.advance(3.0)
    fail(queue, info)  # error
    assert (info.consecutive_errors, info.unschedulable_count) == (1, 0)
    assert info.timestamp == 1003.0
    assert queue.locate(pod.key) == "backoff"

    clock.advance(5.0)
    queue.flush_backoff_completed()
    info = queue.pop()
    assert info is not None
    fail(queue, info, "NodeAffinity")  # rejected, nothing happened meanwhile
    assert (info.consecutive_errors, info.unschedulable_count) == (0, 1)
    assert queue.locate(pod.key) == "unschedulable"
    assert info.initial_attempt_timestamp == 1000.0


def test_a_pod_already_queued_is_not_added_twice(
    make_queue: QueueFactory, incoming: list[tuple[str, str]]
) -> None:
    queue = make_queue()
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.get(pod.key)
    assert info is not None
    incoming.clear()
    queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)
    assert queue.pending_counts()["active"] == 1 and incoming == []


def test_leftover_flush_releases_pods_stuck_over_five_minutes(
    make_queue: QueueFactory, fail: Fail, clock: FakeClock, incoming: list[tuple[str, str]]
) -> None:
    queue = make_queue()
    stuck, fresh = make_pod("stuck").obj(), make_pod("fresh").obj()
    queue.add(stuck)
    queue.add(fresh)
    first, second = queue.pop(), queue.pop()
    assert first is not None and second is not None
    fail(queue, first, "NodeAffinity")
    clock.advance(100.0)
    fail(queue, second, "NodeAffinity")
    clock.advance(200.0)  # stuck: exactly 300 s
    queue.flush_unschedulable_leftover()
    assert queue.locate(stuck.key) == "unschedulable"
    clock.advance(1.0)
    incoming.clear()
    queue.flush_unschedulable_leftover()
    assert queue.locate(stuck.key) == "active"
    assert queue.locate(fresh.key) == "unschedulable"
    assert incoming == [("active", "UnschedulableTimeout")]


def test_leftover_flush_respects_unfinished_backoff(
    make_queue: QueueFactory, fail: Fail, clock: FakeClock
) -> None:
    queue = make_queue(max_in_unschedulable=2.0)
    pod = make_pod("p").obj()
    queue.add(pod)
    for _ in range(3):  # third attempt: 4 s backoff
        info = queue.pop()
        assert info is not None
        fail(queue, info, "NodeAffinity")
        queue.activate([pod])
    info = queue.pop()
    assert info is not None and info.attempts == 4
    fail(queue, info, "NodeAffinity")  # 8 s backoff
    clock.advance(3.0)
    queue.flush_unschedulable_leftover()
    assert queue.locate(pod.key) == "backoff"


def test_pending_counts_and_observer_labels_follow_every_move(
    make_queue: QueueFactory, fail: Fail, clock: FakeClock, incoming: list[tuple[str, str]]
) -> None:
    queue = make_queue()
    gated = make_pod("gated").scheduling_gate("example.com/wait").obj()
    rejected = make_pod("rejected").obj()
    broken = make_pod("broken").obj()
    waiting = make_pod("waiting").obj()
    for pod in (gated, rejected, broken):
        queue.add(pod)
    a, b = queue.pop(), queue.pop()
    assert a is not None and b is not None
    fail(queue, a, "NodeAffinity")
    fail(queue, b)
    queue.add(waiting)
    assert queue.pending_counts() == {"active": 1, "backoff": 1, "unschedulable": 1, "gated": 1}
    assert queue.summary() == "activeQ:1; backoffQ:1; unschedulablePods:2"
    clock.advance(2.0)
    queue.flush_backoff_completed()
    assert incoming == [
        ("unschedulable", "UnschedulablePodAdd"),  # the gated pod, labelled as upstream does
        ("active", "UnschedulablePodAdd"),
        ("active", "UnschedulablePodAdd"),
        ("unschedulable", "ScheduleAttemptFailure"),
        ("backoff", "ScheduleAttemptFailure"),
        ("active", "UnschedulablePodAdd"),
        ("active", "BackoffComplete"),
    ]
    assert len(queue.pending_pods()) == 4


def test_unschedulable_plugin_counts_by_plugin_and_profile(
    make_queue: QueueFactory, fail: Fail
) -> None:
    queue = make_queue()
    pods = [
        make_pod("a").obj(),
        make_pod("b").obj(),
        make_pod("c").scheduler("other").obj(),
        make_pod("d").scheduling_gate("g").obj(),
    ]
    for pod in pods:
        queue.add(pod)
    popped = {i.pod.name: i for i in iter(queue.pop, None)}
    fail(queue, popped["a"], "NodeAffinity", "TaintToleration")
    fail(queue, popped["b"], "NodeAffinity", pending=["DynamicResources"])
    fail(queue, popped["c"], "NodeAffinity")
    assert queue.unschedulable_plugin_counts() == {
        ("NodeAffinity", "default-scheduler"): 2,
        ("TaintToleration", "default-scheduler"): 1,
        ("DynamicResources", "default-scheduler"): 1,
        ("NodeAffinity", "other"): 1,
        ("SchedulingGates", "default-scheduler"): 1,
    }
    # Popping a pod for a new attempt takes it out of the count; the series stays, at 0, as
    # an upstream gauge child does once created.
    queue.activate([pods[0]])
    assert queue.pop() is popped["a"]
    counts = queue.unschedulable_plugin_counts()
    assert counts[("TaintToleration", "default-scheduler")] == 0
    assert counts[("NodeAffinity", "default-scheduler")] == 1


def test_a_rejection_counted_and_gone_before_a_scrape_still_leaves_its_series(
    make_queue: QueueFactory, fail: Fail
) -> None:
    queue = make_queue()
    pod = make_pod("a").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    fail(queue, info, "NodePorts")
    queue.activate([pod])
    assert queue.pop() is info
    assert queue.unschedulable_plugin_counts() == {("NodePorts", "default-scheduler"): 0}
