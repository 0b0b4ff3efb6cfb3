"""API objects whose quantities do not fit the scheduler's int64 columns.

Nodes and pods come from the informers as the API holds them. One whose quantities are beyond
an int64 is reported, naming it, and skipped; the node table never keeps a half-written row and
the rest of the cluster schedules on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.conftest import CapturedLogs
from tests.integration.harness import Harness

INT64_MAX = 2**63 - 1


async def replace_node(h: Harness, node: dict[str, Any]) -> None:
    """Write `node` over the stored node of its name, as an update."""
    current = await h.sim.get("nodes", "", node["metadata"]["name"])
    node["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    node["metadata"]["uid"] = current["metadata"]["uid"]
    await h.sim.update("nodes", node)
    await h.quiesce()


@pytest.mark.parametrize(
    ("resource", "quantity"),
    [("cpu", "5Ei"), ("cpu", "1e300"), ("memory", "16Ei"), ("cpu", "1e999999999")],
)
async def test_a_node_beyond_int64_is_reported_and_skipped(
    resource: str, quantity: str, captured_logs: CapturedLogs
) -> None:
    shape = {"cpu": "4", "memory": "8Gi", "pods": "10", resource: quantity}
    async with Harness() as h:
        h.create(
            [
                make_node("good").capacity(cpu="4", memory="8Gi", pods="10").dict(),
                make_node("huge").capacity(**shape).dict(),
                make_pod("p").req(cpu="1").dict(),
            ]
        )
        await h.schedule_active()
        table = h.scheduler.cache.table
        assert table.names == ["good"]
        assert table.row_of("huge") is None
        assert h.scheduler.cache.node_info("huge") is None
        assert h.node_of("default", "p") == "good"
        messages = [r["err"] for r in captured_logs.records("warning")]
        assert any(
            f"Node huge: status.allocatable.{resource}" in m and quantity[:8] in m for m in messages
        ), messages


async def test_a_node_updated_beyond_int64_keeps_its_last_readable_row(
    captured_logs: CapturedLogs,
) -> None:
    async with Harness() as h:
        h.create([make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").dict()])
        await h.quiesce()
        row = h.scheduler.cache.table.row_of("n1")
        assert row is not None
        before = h.scheduler.cache.table.allocatable[row].copy()
        await replace_node(h, make_node("n1").capacity(cpu="5Ei", memory="8Gi", pods="10").dict())
        assert h.scheduler.cache.table.names == ["n1"]
        np.testing.assert_array_equal(h.scheduler.cache.table.allocatable[row], before)
        assert any(
            "Node n1: status.allocatable.cpu" in r["err"] for r in captured_logs.records("warning")
        )


async def test_a_node_that_becomes_readable_arrives_for_the_pods_waiting_for_room() -> None:
    """Skipped while unreadable, the node is added when an update makes it readable, and the
    pods that waited for room are retried at once (as a NodeAdd), not at the next flush."""
    async with Harness() as h:
        h.create(
            [
                make_node("n1").capacity(cpu="5Ei", memory="8Gi", pods="10").dict(),
                make_node("tiny").capacity(cpu="500m", memory="8Gi", pods="10").dict(),
            ]
        )
        await h.quiesce()
        h.create([make_pod("p").req(cpu="1").dict()])
        await h.schedule_active()
        assert h.scheduler.queue.locate("default/p") == "unschedulable"
        await replace_node(h, make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").dict())
        assert h.scheduler.queue.locate("default/p") == "backoff"
        h.clock.advance(10.0)  # past any backoff (10 s at most)
        h.scheduler.queue.flush_backoff_completed()
        await h.schedule_active()
        assert h.node_of("default", "p") == "n1"


async def test_a_pod_whose_requests_add_up_beyond_int64_is_skipped(
    captured_logs: CapturedLogs,
) -> None:
    # Each container's request fits in an int64; their sum does not.
    containers = [
        {"name": f"c{i}", "image": "x", "resources": {"requests": {"memory": "7Ei"}}}
        for i in range(2)
    ]
    pod = make_pod("sum").dict()
    pod["spec"]["containers"] = containers
    async with Harness() as h:
        h.create(
            [
                make_node("n1").capacity(cpu="4", memory="7Ei", pods="10").dict(),
                pod,
                make_pod("ok").req(cpu="1").dict(),
            ]
        )
        await h.schedule_active()
        assert h.node_of("default", "ok") == "n1"
        assert h.node_of("default", "sum") is None
        messages = [r["err"] for r in captured_logs.records("warning")]
        assert any("Pod default/sum: spec: the pod's memory request" in m for m in messages)


async def test_usage_past_int64_on_one_node_saturates_instead_of_failing() -> None:
    # Pods bound by someone else: each fits an int64, together they pass it.
    bound = [make_pod(f"big-{i}").req(memory="7Ei").node("n1").dict() for i in range(2)]
    async with Harness() as h:
        h.create([make_node("n1").capacity(cpu="4", memory="7Ei", pods="10").dict(), *bound])
        await h.quiesce()
        h.create([make_pod("small").req(memory="1").dict()])
        await h.schedule_active()
        table = h.scheduler.cache.table
        row = table.row_of("n1")
        assert row is not None
        assert table.requested_of("memory")[row] == INT64_MAX
        assert table.pod_count[row] == 2
        assert h.node_of("default", "small") is None
