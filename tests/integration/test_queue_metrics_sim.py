"""The queue's metric families, read from a real scheduler on the in-memory cluster."""

from __future__ import annotations

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness


async def test_hints_are_timed_and_in_flight_events_counted_as_kube_scheduler_does() -> None:
    async with Harness({}) as h:
        h.create([make_node("small").capacity(cpu="1", pods="10").dict()])
        h.create([make_pod("big").req(cpu="2").dict()])
        await h.schedule_active()
        assert h.scheduler.queue.locate("default/big") == "unschedulable"
        registry = h.scheduler.metrics.registry
        # While it was being scheduled the pod was in flight; now nothing is.
        assert registry.get_sample_value("scheduler_inflight_events", {"event": "PodPopped"}) == 0

        h.create([make_node("large").capacity(cpu="4", pods="10").dict()])
        await h.quiesce()
        # NodeResourcesFit rejected the pod, so its hint was asked about the new node.
        timed = registry.get_sample_value(
            "scheduler_queueing_hint_execution_duration_seconds_count",
            {"plugin": "NodeResourcesFit", "event": "NodeAdd", "hint": "Queue"},
        )
        assert timed == 1
        assert h.scheduler.queue.locate("default/big") in ("backoff", "active")
