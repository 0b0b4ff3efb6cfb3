"""Assigned-pod events only reach pods that depend on other pods across a topology."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduler.backend.queue import SchedulingQueue
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.events import QueueingHint
from scheduler.objects.pod import Pod
from scheduler.testing.builders import make_pod

QueueFactory = Callable[..., SchedulingQueue]
Fail = Callable[..., None]
Register = Callable[..., tuple[str, ClusterEventWithHint]]

ZONE = "topology.kubernetes.io/zone"


def queue_always(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


@pytest.fixture
def queue(make_queue: QueueFactory, reg: Register) -> SchedulingQueue:
    every_pod_event = ActionType.ADD | ActionType.DELETE | ActionType.UPDATE
    return make_queue(
        [
            reg("InterPodAffinity", EventResource.POD, every_pod_event, queue_always),
            reg("PodTopologySpread", EventResource.POD, every_pod_event, queue_always),
            reg("NodeResourcesFit", EventResource.POD, every_pod_event, queue_always),
        ]
    )


def reject(queue: SchedulingQueue, fail: Fail, pod: Pod, plugin: str) -> None:
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    fail(queue, info, plugin)
    assert queue.locate(pod.key) == "unschedulable"


def test_added_pod_reaches_only_pods_it_can_help(queue: SchedulingQueue, fail: Fail) -> None:
    wants_web = make_pod("wants-web").pod_affinity("required", ZONE, {"app": "web"}).obj()
    wants_db = make_pod("wants-db").pod_affinity("required", ZONE, {"app": "db"}).obj()
    spread_here = make_pod("spread-here").obj()
    spread_elsewhere = make_pod("spread-elsewhere", namespace="other").obj()
    needs_cpu = make_pod("needs-cpu").obj()
    reject(queue, fail, wants_web, "InterPodAffinity")
    reject(queue, fail, wants_db, "InterPodAffinity")
    reject(queue, fail, spread_here, "PodTopologySpread")
    reject(queue, fail, spread_elsewhere, "PodTopologySpread")
    reject(queue, fail, needs_cpu, "NodeResourcesFit")

    queue.assigned_pod_added(make_pod("web-1").label("app", "web").node("n1").obj())
    where = {
        pod.name: queue.locate(pod.key)
        for pod in (wants_web, wants_db, spread_here, spread_elsewhere, needs_cpu)
    }
    assert where == {
        "wants-web": "backoff",
        "wants-db": "unschedulable",
        "spread-here": "backoff",
        "spread-elsewhere": "unschedulable",
        "needs-cpu": "unschedulable",
    }


def test_scale_down_of_an_assigned_pod_reaches_every_pod(
    queue: SchedulingQueue, fail: Fail
) -> None:
    needs_cpu = make_pod("needs-cpu").obj()
    reject(queue, fail, needs_cpu, "NodeResourcesFit")
    old = make_pod("big").req(cpu="2").node("n1").obj()
    queue.assigned_pod_updated(old, make_pod("big").uid(old.uid).req(cpu="1").node("n1").obj())
    assert queue.locate(needs_cpu.key) == "backoff"


def test_label_update_of_an_assigned_pod_is_prefiltered(queue: SchedulingQueue, fail: Fail) -> None:
    wants_web = make_pod("wants-web").pod_affinity("required", ZONE, {"app": "web"}).obj()
    needs_cpu = make_pod("needs-cpu").obj()
    reject(queue, fail, wants_web, "InterPodAffinity")
    reject(queue, fail, needs_cpu, "NodeResourcesFit")
    old = make_pod("x").node("n1").obj()
    queue.assigned_pod_updated(old, make_pod("x").uid(old.uid).label("app", "web").node("n1").obj())
    assert queue.locate(wants_web.key) == "backoff"
    assert queue.locate(needs_cpu.key) == "unschedulable"


def test_deleted_assigned_pod_reaches_every_pod(queue: SchedulingQueue, fail: Fail) -> None:
    needs_cpu = make_pod("needs-cpu").obj()
    reject(queue, fail, needs_cpu, "NodeResourcesFit")
    queue.assigned_pod_deleted(make_pod("gone").node("n1").obj())
    assert queue.locate(needs_cpu.key) == "backoff"


def test_namespace_selector_terms_use_the_namespace_labels(
    make_queue: QueueFactory, reg: Register, fail: Fail
) -> None:
    queue = make_queue(
        [reg("InterPodAffinity", EventResource.POD, ActionType.ADD, queue_always)],
        namespace_labels=lambda ns: {"team": "a"} if ns == "team-a" else {},
    )
    wants = (
        make_pod("wants")
        .pod_affinity(
            "required", ZONE, {"app": "web"}, namespace_selector={"matchLabels": {"team": "a"}}
        )
        .obj()
    )
    reject(queue, fail, wants, "InterPodAffinity")
    queue.assigned_pod_added(make_pod("w", namespace="team-b").label("app", "web").node("n").obj())
    assert queue.locate(wants.key) == "unschedulable"
    queue.assigned_pod_added(make_pod("w", namespace="team-a").label("app", "web").node("n").obj())
    assert queue.locate(wants.key) == "backoff"
