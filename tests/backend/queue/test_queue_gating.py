"""PreEnqueue gating: gated pods wait in the pool and only their gating plugin's events help."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler.backend.queue import SchedulingQueue
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.events import QueueingHint
from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod
from scheduler.testing.fake_clock import FakeClock

QueueFactory = Callable[..., SchedulingQueue]
Fail = Callable[..., None]
Register = Callable[..., tuple[str, ClusterEventWithHint]]

QUOTA_CHANGED = ClusterEvent(EventResource.ELASTIC_QUOTA, ActionType.UPDATE, "QuotaUpdate")


def queue_always(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


class QuotaGate:
    """A PreEnqueue that admits pods only while open, counting its calls."""

    def __init__(self) -> None:
        self.open = False
        self.calls: list[str] = []
        self.gating: list[str] = []

    def __call__(self, pod: Pod, gating_plugin: str) -> Status:
        self.calls.append(pod.name)
        self.gating.append(gating_plugin)
        if self.open:
            return SUCCESS
        return Status.unresolvable("quota exhausted").with_plugin("Quota")


def quota_queue(make_queue: QueueFactory, reg: Register, gate: QuotaGate) -> SchedulingQueue:
    return make_queue(
        [
            reg("Quota", EventResource.ELASTIC_QUOTA, ActionType.UPDATE, queue_always),
            reg("A", EventResource.NODE, ActionType.ADD, queue_always),
        ],
        pre_enqueue=gate,
    )


def test_pod_with_scheduling_gates_is_held_as_gated(
    make_queue: QueueFactory, incoming: list[tuple[str, str]]
) -> None:
    queue = make_queue()
    pod = make_pod("p").scheduling_gate("example.com/a").obj()
    queue.add(pod)
    info = queue.get(pod.key)
    assert info is not None
    assert (info.gating_plugin, info.unschedulable_plugins) == (
        "SchedulingGates",
        {"SchedulingGates"},
    )
    assert queue.locate(pod.key) == "gated"
    assert queue.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    # Upstream counts a gated pod's arrival in the pool as queue="unschedulable".
    assert incoming == [("unschedulable", "UnschedulablePodAdd")]
    assert queue.pop() is None


def test_removing_every_gate_releases_the_pod(
    make_queue: QueueFactory, incoming: list[tuple[str, str]]
) -> None:
    queue = make_queue()
    two_gates = make_pod("p").scheduling_gate("a").scheduling_gate("b")
    pod = two_gates.obj()
    queue.add(pod)
    one_gate = make_pod("p").uid(pod.uid).scheduling_gate("b").obj()
    queue.update(pod, one_gate)
    assert queue.locate(pod.key) == "gated"
    no_gates = make_pod("p").uid(pod.uid).obj()
    queue.update(one_gate, no_gates)
    assert queue.locate(pod.key) == "active"
    info = queue.get(pod.key)
    assert info is not None and info.gating_plugin == "" and info.pod is no_gates
    assert incoming[-1] == ("active", "UnschedulablePodUpdatePodSchedulingGatesEliminated")


def test_only_the_gating_plugins_events_release_a_gated_pod(
    make_queue: QueueFactory, reg: Register, fail: Fail
) -> None:
    gate = QuotaGate()
    gate.open = True
    queue = quota_queue(make_queue, reg, gate)
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    fail(queue, info, "A")
    gate.open = False
    queue.activate([pod])  # PreEnqueue runs again and gates it
    assert queue.locate(pod.key) == "gated"
    assert info.unschedulable_plugins == {"A", "Quota"}

    queue.node_event(NODE_ADD, None, make_node("n1").obj())  # A's event: not for a gated pod
    assert queue.locate(pod.key) == "gated"
    queue.move_all_to_active_or_backoff(QUOTA_CHANGED, None, None)  # still closed
    assert queue.locate(pod.key) == "gated"
    gate.open = True
    queue.move_all_to_active_or_backoff(QUOTA_CHANGED, None, None)
    assert queue.locate(pod.key) == "backoff"  # released, and its backoff is not over yet
    assert queue.get(pod.key) is info and not info.gated
    # Each run is told which plugin holds the pod, so that one can be asked first.
    assert gate.gating == ["", "", "Quota", "Quota"]


def test_leftover_flush_and_activate_do_not_release_gated_pods(
    make_queue: QueueFactory, clock: FakeClock
) -> None:
    queue = make_queue()
    pod = make_pod("p").scheduling_gate("g").obj()
    queue.add(pod)
    clock.advance(600.0)
    queue.flush_unschedulable_leftover()
    queue.activate([pod])
    assert queue.locate(pod.key) == "gated"


def test_pre_enqueue_runs_on_entry_to_backoff_not_again_on_the_way_out(
    make_queue: QueueFactory, reg: Register, fail: Fail, clock: FakeClock
) -> None:
    gate = QuotaGate()
    gate.open = True
    queue = quota_queue(make_queue, reg, gate)
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    fail(queue, info, "A")
    gate.calls.clear()
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    assert queue.locate(pod.key) == "backoff" and gate.calls == ["p"]
    clock.advance(2.0)
    queue.flush_backoff_completed()
    assert queue.locate(pod.key) == "active" and gate.calls == ["p"]


def test_gate_closing_while_in_the_pool_keeps_the_pod_out_of_backoff(
    make_queue: QueueFactory, reg: Register, fail: Fail
) -> None:
    gate = QuotaGate()
    gate.open = True
    queue = quota_queue(make_queue, reg, gate)
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    fail(queue, info, "A")
    gate.open = False
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    assert queue.locate(pod.key) == "gated"


def test_rejection_without_a_plugin_name_still_gates(make_queue: QueueFactory) -> None:
    queue = make_queue(pre_enqueue=lambda pod, gating: Status.unresolvable("no"))
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.get(pod.key)
    assert info is not None and info.gating_plugin == "PreEnqueue"
    assert queue.locate(pod.key) == "gated"
