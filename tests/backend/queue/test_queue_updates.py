"""Updates, deletes and Activate, in every sub-queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduler.backend.queue import SchedulingQueue
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.events import QueueingHint
from scheduler.objects.pod import Pod
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod
from scheduler.testing.fake_clock import FakeClock

QueueFactory = Callable[..., SchedulingQueue]
Fail = Callable[..., None]
Register = Callable[..., tuple[str, ClusterEventWithHint]]


def queue_always(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


def queue_if_labelled_ready(pod: Pod, old: Any, new: Any) -> QueueingHint:
    ready = isinstance(new, Pod) and new.uid == pod.uid and new.labels.get("ready") == "yes"
    return QueueingHint.QUEUE if ready else QueueingHint.QUEUE_SKIP


@pytest.fixture
def queue(make_queue: QueueFactory, reg: Register) -> SchedulingQueue:
    return make_queue(
        [
            reg("A", EventResource.NODE, ActionType.ADD, queue_always),
            reg("Labels", EventResource.POD, ActionType.UPDATE_POD_LABEL, queue_if_labelled_ready),
        ]
    )


def place(queue: SchedulingQueue, fail: Fail, pod: Pod, where: str) -> None:
    """Put `pod` into the named sub-queue through the public API."""
    queue.add(pod)
    if where == "active":
        return
    info = queue.pop()
    assert info is not None
    if where == "backoff":
        fail(queue, info)
    else:
        fail(queue, info, "Labels")
    assert queue.locate(pod.key) == where


@pytest.mark.parametrize("where", ["active", "backoff", "unschedulable"])
def test_update_replaces_the_pod_object_where_it_is(
    queue: SchedulingQueue, fail: Fail, where: str
) -> None:
    pod = make_pod("p").obj()
    place(queue, fail, pod, where)
    updated = make_pod("p").uid(pod.uid).annotation("note", "x").obj()
    queue.update(pod, updated)
    info = queue.get(pod.key)
    assert info is not None and info.pod is updated
    assert queue.locate(pod.key) == where


@pytest.mark.parametrize("where", ["active", "backoff", "unschedulable"])
def test_delete_removes_the_pod_from_any_sub_queue(
    queue: SchedulingQueue, fail: Fail, where: str
) -> None:
    pod = make_pod("p").nominated("n1").obj()
    place(queue, fail, pod, where)
    queue.add_nominated_pod(pod, "n1")
    queue.delete(pod)
    assert queue.locate(pod.key) == "" and queue.get(pod.key) is None
    assert sum(queue.pending_counts().values()) == 0
    assert queue.nominated_pods_for_node("n1") == []


def test_delete_of_a_gated_pod(queue: SchedulingQueue) -> None:
    pod = make_pod("p").scheduling_gate("g").obj()
    queue.add(pod)
    queue.delete(pod)
    assert queue.pending_counts()["gated"] == 0


def test_priority_raise_in_active_reorders(queue: SchedulingQueue, clock: FakeClock) -> None:
    first, second = make_pod("first").obj(), make_pod("second").obj()
    queue.add(first)
    clock.advance(1.0)
    queue.add(second)
    queue.update(second, make_pod("second").uid(second.uid).priority(10).obj())
    head = queue.pop()
    assert head is not None and head.pod.name == "second"


def test_update_helpful_to_an_unschedulable_pod_moves_it(
    queue: SchedulingQueue, fail: Fail, incoming: list[tuple[str, str]]
) -> None:
    pod = make_pod("p").obj()
    place(queue, fail, pod, "unschedulable")
    unrelated = make_pod("p").uid(pod.uid).label("ready", "no").obj()
    queue.update(pod, unrelated)
    assert queue.locate(pod.key) == "unschedulable"
    ready = make_pod("p").uid(pod.uid).label("ready", "yes").obj()
    incoming.clear()
    queue.update(unrelated, ready)
    assert queue.locate(pod.key) == "backoff"
    assert incoming == [("backoff", "UnschedulablePodUpdatePodLabel")]


def test_update_of_an_unknown_pod_adds_it_to_active(
    queue: SchedulingQueue, incoming: list[tuple[str, str]]
) -> None:
    old = make_pod("p").obj()
    queue.update(old, make_pod("p").uid(old.uid).label("a", "b").obj())
    assert queue.locate(old.key) == "active"
    assert incoming == [("active", "UnschedulablePodUpdate")]


def test_adding_a_known_pod_again_updates_it(queue: SchedulingQueue) -> None:
    pod = make_pod("p").obj()
    queue.add(pod)
    again = make_pod("p").uid(pod.uid).priority(3).obj()
    queue.add(again)
    assert queue.pending_counts()["active"] == 1
    info = queue.get(pod.key)
    assert info is not None and info.pod is again


def test_adding_a_pod_that_is_being_scheduled_is_ignored(queue: SchedulingQueue) -> None:
    pod = make_pod("p").obj()
    queue.add(pod)
    assert queue.pop() is not None
    queue.add(pod)
    assert queue.locate(pod.key) == "in-flight"
    assert queue.pop() is None


@pytest.mark.parametrize("where", ["backoff", "unschedulable"])
def test_activate_moves_straight_to_active(
    queue: SchedulingQueue, fail: Fail, where: str, incoming: list[tuple[str, str]]
) -> None:
    pod = make_pod("p").obj()
    place(queue, fail, pod, where)
    incoming.clear()
    queue.activate([pod])
    assert queue.locate(pod.key) == "active"
    assert incoming == [("active", "ForceActivate")]


def test_activate_ignores_unknown_and_active_pods(
    queue: SchedulingQueue, incoming: list[tuple[str, str]]
) -> None:
    active = make_pod("active").obj()
    queue.add(active)
    incoming.clear()
    queue.activate([active, make_pod("stranger").obj()])
    assert queue.locate(active.key) == "active"
    assert queue.locate("default/stranger") == ""
    assert incoming == []


def test_node_event_after_update_still_sees_the_new_pod(queue: SchedulingQueue, fail: Fail) -> None:
    pod = make_pod("p").obj()
    place(queue, fail, pod, "unschedulable")
    info = queue.get(pod.key)
    assert info is not None
    info.unschedulable_plugins.add("A")
    updated = make_pod("p").uid(pod.uid).annotation("k", "v").obj()
    queue.update(pod, updated)
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    moved = queue.get(pod.key)
    assert moved is not None and moved.pod is updated
    assert queue.locate(pod.key) == "backoff"
