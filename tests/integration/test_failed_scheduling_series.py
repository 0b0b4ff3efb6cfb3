"""FailedScheduling Events of a pod that keeps failing, counted as client-go counts them: an
Event is about one version of the pod, so the first failure (before its PodScheduled condition
was written) is an Event of its own, and the failures after it repeat a second one."""

from __future__ import annotations

from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.gangs import run_for
from tests.integration.harness import Harness

# Past the unschedulable pool's five minutes, so each step is one more attempt.
RETRY_AFTER = 301.0


def failed_scheduling(h: Harness) -> list[dict[str, Any]]:
    return [e for e in h.sim.events("default/big") if e.get("reason") == "FailedScheduling"]


async def test_failures_after_the_condition_was_written_are_a_second_series() -> None:
    async with Harness() as h:
        h.create(
            [
                make_node("n1").capacity(cpu="1", memory="8Gi", pods="10").dict(),
                make_pod("big").req(cpu="2").dict(),
            ]
        )
        created = h.pod("default", "big")["metadata"]["resourceVersion"]
        await run_for(h, 2 * RETRY_AFTER, step=RETRY_AFTER)
        await h.quiesce()
        patched = h.pod("default", "big")["metadata"]["resourceVersion"]
        assert patched != created  # the condition was written once, after the first failure

        events = failed_scheduling(h)
        assert [e["regarding"]["resourceVersion"] for e in events] == [created, patched]
        first, repeated = events
        assert "series" not in first
        assert repeated["series"]["count"] >= 2
