"""Events that arrive while a pod is being scheduled are replayed when it comes back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler.backend.queue import SchedulingQueue
from scheduler.backend.queue.in_flight import InFlightLog
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import NODE_DELETE
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.events import QueueingHint
from scheduler.objects.pod import Pod
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod

QueueFactory = Callable[..., SchedulingQueue]
Fail = Callable[..., None]


def queue_on_node_add(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


def queue_on_own_label(pod: Pod, old: Any, new: Any) -> QueueingHint:
    same = isinstance(new, Pod) and new.uid == pod.uid and new.labels.get("ready") == "yes"
    return QueueingHint.QUEUE if same else QueueingHint.QUEUE_SKIP


REGISTRATIONS = [
    (
        "A",
        ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), queue_on_node_add),
    ),
    (
        "Labels",
        ClusterEventWithHint(
            ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL), queue_on_own_label
        ),
    ),
]


def test_event_during_the_attempt_is_not_lost(make_queue: QueueFactory, fail: Fail) -> None:
    queue = make_queue(REGISTRATIONS)
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    queue.node_event(NODE_ADD, None, make_node("n1").obj())  # the pool is empty: moves nothing
    fail(queue, info, "A")
    assert queue.locate(pod.key) == "backoff"
    assert queue.in_flight_pods() == []


def test_without_a_helpful_event_the_pod_waits_in_the_pool(
    make_queue: QueueFactory, fail: Fail
) -> None:
    queue = make_queue(REGISTRATIONS)
    pod = make_pod("p").obj()
    queue.add(pod)
    queue.node_event(NODE_ADD, None, make_node("n0").obj())  # before the pop: irrelevant
    info = queue.pop()
    assert info is not None
    queue.node_event(NODE_DELETE, make_node("n1").obj(), None)  # nobody registered it
    fail(queue, info, "A")
    assert queue.locate(pod.key) == "unschedulable"


def test_events_nobody_registered_are_not_logged(make_queue: QueueFactory) -> None:
    queue = make_queue(REGISTRATIONS)
    queue.add(make_pod("p").obj())
    assert queue.pop() is not None
    queue.node_event(NODE_DELETE, make_node("n1").obj(), None)
    queue.node_event(NODE_ADD, None, make_node("n2").obj())
    assert queue._in_flight.event_count == 1


def test_pending_plugin_event_during_the_attempt_skips_backoff(
    make_queue: QueueFactory, fail: Fail
) -> None:
    queue = make_queue(REGISTRATIONS)
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    fail(queue, info, pending=["A"])
    assert queue.locate(pod.key) == "active"


def test_update_of_the_pod_itself_during_the_attempt_is_replayed(
    make_queue: QueueFactory, fail: Fail
) -> None:
    queue = make_queue(REGISTRATIONS)
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    updated = make_pod("p").uid(pod.uid).label("ready", "yes").obj()
    queue.update(pod, updated)
    assert queue.locate(pod.key) == "in-flight"  # not re-added while being scheduled
    fail(queue, info, "Labels")
    assert queue.locate(pod.key) == "backoff"


def test_each_pod_sees_only_events_after_its_own_pop(make_queue: QueueFactory, fail: Fail) -> None:
    queue = make_queue(REGISTRATIONS)
    first, second = make_pod("first").priority(2).obj(), make_pod("second").priority(1).obj()
    queue.add(first)
    queue.add(second)
    info_first = queue.pop()
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    info_second = queue.pop()
    assert info_first is not None and info_second is not None
    fail(queue, info_second, "A")
    fail(queue, info_first, "A")
    assert queue.locate(first.key) == "backoff"
    assert queue.locate(second.key) == "unschedulable"


def test_activating_an_in_flight_pod_requeues_only_that_pod(
    make_queue: QueueFactory, fail: Fail
) -> None:
    queue = make_queue(REGISTRATIONS)
    target, bystander = make_pod("target").obj(), make_pod("bystander").obj()
    queue.add(target)
    queue.add(bystander)
    infos = list(iter(queue.pop, None))
    queue.activate([target])
    for info in infos:
        fail(queue, info, "A")
    assert queue.locate(target.key) == "backoff"
    assert queue.locate(bystander.key) == "unschedulable"


def test_log_keeps_events_only_while_some_earlier_pod_needs_them() -> None:
    log = InFlightLog()
    a, b = make_pod("a").obj(), make_pod("b").obj()
    assert not log.record(NODE_ADD, None, None)  # nobody in flight
    assert log.start(a)
    assert not log.start(a)
    log.record(NODE_ADD, None, "e1")
    log.start(b)
    log.record(NODE_ADD, None, "e2")
    events_a = log.events_since_pop(a)
    events_b = log.events_since_pop(b)
    assert events_a is not None and [e.new for e in events_a] == ["e1", "e2"]
    assert events_b is not None and [e.new for e in events_b] == ["e2"]
    log.done(a)
    assert log.event_count == 1  # e1 is older than every pod still in flight
    assert log.events_since_pop(a) is None
    log.done(b)
    assert (len(log), log.event_count) == (0, 0)
    log.done(b)  # idempotent


def test_the_in_flight_gauge_counts_pods_and_kept_events_by_label(
    make_queue: QueueFactory, fail: Fail
) -> None:
    queue = make_queue(REGISTRATIONS)
    assert queue.in_flight_event_counts() == {}
    queue.add(make_pod("p").obj())
    queue.add(make_pod("q").obj())
    first, second = queue.pop(), queue.pop()
    assert first is not None and second is not None
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    queue.node_event(NODE_ADD, None, make_node("n2").obj())
    assert queue.in_flight_event_counts() == {"PodPopped": 2, "NodeAdd": 2}
    fail(queue, first, "A")
    assert queue.in_flight_event_counts() == {"PodPopped": 1, "NodeAdd": 2}
    fail(queue, second, "A")
    # Labels once seen stay, at zero, as upstream's gauge children do.
    assert queue.in_flight_event_counts() == {"PodPopped": 0, "NodeAdd": 0}


def test_an_event_kept_and_dropped_between_scrapes_still_has_its_series(
    make_queue: QueueFactory, fail: Fail
) -> None:
    queue = make_queue(REGISTRATIONS)
    queue.add(make_pod("p").obj())
    popped = queue.pop()
    assert popped is not None
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    fail(queue, popped, "A")
    # No scrape saw the NodeAdd while it was kept; upstream's child exists all the same.
    assert queue.in_flight_event_counts() == {"NodeAdd": 0, "PodPopped": 0}
