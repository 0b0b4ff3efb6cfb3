"""A node update is one cluster event per aspect that changed, as upstream's
NodeSchedulingPropertiesChange, each timed under its own label."""

from __future__ import annotations

from typing import Any

from scheduler.testing import make_node
from tests.integration.harness import Harness

METRIC = "scheduler_event_handling_duration_seconds_count"


def _handled(h: Harness, event: str) -> float:
    value = h.scheduler.metrics.registry.get_sample_value(METRIC, {"event": event})
    return value or 0.0


async def _update(h: Harness, node: dict[str, Any]) -> None:
    current = h.sim.objects("nodes")[0]
    node["metadata"].pop("uid", None)
    node["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    await h.sim.update("nodes", node)
    await h.quiesce()


async def test_each_changed_aspect_of_a_node_is_its_own_event() -> None:
    async with Harness() as h:
        h.create([make_node("n1").dict()])
        await h.quiesce()
        await _update(h, make_node("n1").label("zone", "a").taint("k").dict())
        assert _handled(h, "NodeUpdateNodeLabel") == 1
        assert _handled(h, "NodeUpdateNodeTaint") == 1
        assert _handled(h, "NodeUpdateNodeLabel|UpdateNodeTaint") == 0


async def test_an_update_that_changes_nothing_relevant_is_not_an_event() -> None:
    async with Harness() as h:
        h.create([make_node("n1").dict()])
        await h.quiesce()
        node = make_node("n1").dict()
        node["status"]["conditions"] = [{"type": "Ready", "lastHeartbeatTime": "later"}]
        await _update(h, node)
        assert _handled(h, "NodeUpdate") == 0
