"""Assigned-pod events reach every pod whose rejecting plugins registered them, and their hints
decide, as kube-scheduler's MoveAllToActiveOrBackoffQueue does with QueueingHints."""

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


def queue_if_web(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A stand-in for InterPodAffinity's hint: only a pod labelled app=web can help."""
    helps = isinstance(new, Pod) and new.labels.get("app") == "web"
    return QueueingHint.QUEUE if helps else QueueingHint.QUEUE_SKIP


@pytest.fixture
def queue(make_queue: QueueFactory, reg: Register) -> SchedulingQueue:
    pod_changes = ActionType.ADD | ActionType.DELETE | ActionType.UPDATE
    return make_queue(
        [
            reg("InterPodAffinity", EventResource.POD, pod_changes, queue_if_web),
            reg("OutOfTree", EventResource.POD, pod_changes, queue_always),
            reg(
                "NodeResourcesFit",
                EventResource.POD,
                ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN,
                queue_always,
            ),
        ]
    )


def reject(queue: SchedulingQueue, fail: Fail, pod: Pod, plugin: str) -> None:
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    fail(queue, info, plugin)
    assert queue.locate(pod.key) == "unschedulable"


def test_an_added_pod_reaches_the_pods_whose_plugins_registered_it(
    queue: SchedulingQueue, fail: Fail
) -> None:
    wants_web = make_pod("wants-web").obj()
    custom = make_pod("custom").obj()
    needs_cpu = make_pod("needs-cpu").obj()
    reject(queue, fail, wants_web, "InterPodAffinity")
    reject(queue, fail, custom, "OutOfTree")
    reject(queue, fail, needs_cpu, "NodeResourcesFit")

    queue.assigned_pod_added(make_pod("web-1").label("app", "web").node("n1").obj())
    where = {pod.name: queue.locate(pod.key) for pod in (wants_web, custom, needs_cpu)}
    assert where == {
        # Its plugin's hint says the new pod helps.
        "wants-web": "backoff",
        # An out-of-tree plugin that registered Pod/Add hears of assigned pods too.
        "custom": "backoff",
        # NodeResourcesFit did not register additions.
        "needs-cpu": "unschedulable",
    }


def test_the_hint_still_decides(queue: SchedulingQueue, fail: Fail) -> None:
    wants_web = make_pod("wants-web").obj()
    reject(queue, fail, wants_web, "InterPodAffinity")
    queue.assigned_pod_added(make_pod("db-1").label("app", "db").node("n1").obj())
    assert queue.locate(wants_web.key) == "unschedulable"


def test_scale_down_of_an_assigned_pod_reaches_every_pod(
    queue: SchedulingQueue, fail: Fail
) -> None:
    needs_cpu = make_pod("needs-cpu").obj()
    reject(queue, fail, needs_cpu, "NodeResourcesFit")
    old = make_pod("big").req(cpu="2").node("n1").obj()
    queue.assigned_pod_updated(old, make_pod("big").uid(old.uid).req(cpu="1").node("n1").obj())
    assert queue.locate(needs_cpu.key) == "backoff"


def test_a_label_update_reaches_the_pods_whose_plugins_registered_it(
    queue: SchedulingQueue, fail: Fail
) -> None:
    wants_web = make_pod("wants-web").obj()
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
