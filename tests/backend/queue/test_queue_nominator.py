"""Nominated pods: from preemption (in memory) and from status.nominatedNodeName."""

from __future__ import annotations

from collections.abc import Callable

from scheduler.backend.queue import SchedulingQueue
from scheduler.backend.queue.nominator import Nominator
from scheduler.testing.builders import make_pod

QueueFactory = Callable[..., SchedulingQueue]
Fail = Callable[..., None]


def names(queue: SchedulingQueue, node: str) -> list[str]:
    return [pod.name for pod in queue.nominated_pods_for_node(node)]


def test_nominations_per_node_in_order_and_renomination_moves_the_pod(
    make_queue: QueueFactory,
) -> None:
    queue = make_queue()
    a, b, c = (make_pod(n).obj() for n in "abc")
    queue.add_nominated_pod(a, "n1")
    queue.add_nominated_pod(b, "n2")
    queue.add_nominated_pod(c, "n1")
    assert names(queue, "n1") == ["a", "c"] and names(queue, "n2") == ["b"]
    queue.add_nominated_pod(a, "n2")
    assert names(queue, "n1") == ["c"] and names(queue, "n2") == ["b", "a"]
    queue.add_nominated_pod(a, "")  # clears
    queue.delete_nominated_pod(b)
    assert names(queue, "n2") == [] and names(queue, "n3") == []


def test_bound_pods_are_not_nominated() -> None:
    nominator = Nominator()
    nominator.add(make_pod("bound").node("n1").obj(), "n1")
    assert nominator.pods_for_node("n1") == [] and len(nominator) == 0


def test_status_nomination_is_picked_up_when_the_pod_arrives(make_queue: QueueFactory) -> None:
    queue = make_queue()
    pod = make_pod("p").nominated("n1").obj()
    queue.add(pod)
    assert queue.nominated_pods_for_node("n1") == [pod]


def test_in_memory_nomination_survives_an_update_without_status_nomination(
    make_queue: QueueFactory, fail: Fail
) -> None:
    queue = make_queue()
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    queue.add_nominated_pod(pod, "n1")  # preemption chose n1; the PATCH has not landed yet
    fail(queue, info, "NodeResourcesFit")
    labelled = make_pod("p").uid(pod.uid).label("x", "y").obj()
    queue.update(pod, labelled)
    assert queue.nominated_pods_for_node("n1") == [labelled]
    patched = make_pod("p").uid(pod.uid).label("x", "y").nominated("n2").obj()
    queue.update(labelled, patched)
    assert names(queue, "n1") == [] and queue.nominated_pods_for_node("n2") == [patched]
    cleared = make_pod("p").uid(pod.uid).label("x", "y").obj()
    queue.update(patched, cleared)
    assert names(queue, "n2") == []


def test_delete_clears_the_nomination(make_queue: QueueFactory) -> None:
    queue = make_queue()
    pod = make_pod("p").nominated("n1").obj()
    queue.add(pod)
    queue.delete(pod)
    assert names(queue, "n1") == []
