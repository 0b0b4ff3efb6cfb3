"""`scheduler_pod_scheduled_after_flush_total`: pods bound only because the periodic flush took
them out of the unschedulable pool, which points to an event no queueing hint asked for.

`Gate` rejects pods while its `closed` flag is set and registers for an event that never
comes here, so opening it requeues nobody: only the flush can.
"""

from __future__ import annotations

from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import ClusterEventWithHint
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

# Longer than the five minutes a pod may stay in the unschedulable pool.
PAST_LEFTOVER = 301.0
# Longer than any backoff a pod that failed twice waits.
PAST_BACKOFF = 11.0


class Gate:
    name = "Gate"

    def __init__(self, args: None, handle: Handle) -> None:
        self.closed = True

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.unschedulable("gate closed") if self.closed else Status()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(NODE_ADD)]


def _harness() -> Harness:
    enabled = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "Gate"}]
    profile = {
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}},
    }
    return Harness({"profiles": [profile]}, extra_plugins=[PluginSpec("Gate", Gate)])


def _gate(h: Harness) -> Gate:
    plugin = h.scheduler.profiles["default-scheduler"].plugins["Gate"]
    assert isinstance(plugin, Gate)
    return plugin


async def _open_and_add_a_node(h: Harness) -> None:
    """Open the gate, then add a node: the event Gate registered requeues the pod, which is
    scheduled once its backoff is over."""
    _gate(h).closed = False
    h.create([make_node("n2").dict()])
    await h.quiesce()
    h.clock.advance(PAST_BACKOFF)
    h.scheduler.queue.flush_backoff_completed()
    await h.schedule_active()


def _after_flush(h: Harness) -> float:
    value = h.scheduler.metrics.registry.get_sample_value(
        "scheduler_pod_scheduled_after_flush_total", {}
    )
    return value or 0.0


async def test_a_pod_bound_after_the_leftover_flush_is_counted() -> None:
    async with _harness() as h:
        h.create([make_node("n1").dict(), make_pod("stranded").dict()])
        await h.schedule_active()
        assert h.scheduler.queue.locate("default/stranded") == "unschedulable"
        _gate(h).closed = False
        h.clock.advance(PAST_LEFTOVER)
        h.scheduler.queue.flush_unschedulable_leftover()
        h.scheduler.queue.flush_backoff_completed()
        await h.schedule_active()
        assert h.node_of("default", "stranded") == "n1"
        assert _after_flush(h) == 1


async def test_a_pod_an_event_requeued_is_not_counted() -> None:
    async with _harness() as h:
        h.create([make_node("n1").dict(), make_pod("waiting").dict()])
        await h.schedule_active()
        await _open_and_add_a_node(h)
        assert h.node_of("default", "waiting") is not None
        assert _after_flush(h) == 0


async def test_a_flushed_pod_that_fails_again_is_no_longer_counted_when_bound() -> None:
    async with _harness() as h:
        h.create([make_node("n1").dict(), make_pod("p").dict()])
        await h.schedule_active()
        h.clock.advance(PAST_LEFTOVER)
        h.scheduler.queue.flush_unschedulable_leftover()
        h.scheduler.queue.flush_backoff_completed()
        await h.schedule_active()  # still closed: back to the pool, the mark cleared
        await _open_and_add_a_node(h)
        assert h.node_of("default", "p") is not None
        assert _after_flush(h) == 0
