"""A pod's failure writes land before its binding or not at all: the condition a failed
attempt writes through the API dispatcher must not arrive on the pod once a later attempt has
bound it (it would read `PodScheduled=False` on a running pod, or keep a stale nomination)."""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness


async def settle() -> None:
    for _ in range(300):
        await asyncio.sleep(0)


def pod_scheduled(harness: Harness) -> dict[str, Any]:
    conditions = harness.pod("default", "p")["status"].get("conditions") or ()
    return next(c for c in conditions if c["type"] == "PodScheduled")


async def test_a_failure_write_under_way_lands_before_the_binding() -> None:
    async with Harness() as h:
        gate = asyncio.Event()
        sent: list[dict[str, Any]] = []
        write = h.sim.patch_pod_status

        async def slow_write(namespace: str, name: str, patch: dict[str, Any]) -> None:
            sent.append(patch)
            await gate.wait()  # the API is slow to take status writes
            await write(namespace, name, patch)

        h.sim.patch_pod_status = slow_write  # type: ignore[method-assign,assignment]
        h.create(
            [
                make_node("small").capacity(cpu="1", memory="1Gi", pods=10).dict(),
                make_pod("p").req(cpu="2").dict(),
            ]
        )
        await h.informers_caught_up()
        info = h.scheduler.queue.pop()
        assert info is not None
        await h.scheduler.schedule_next(info)
        await settle()
        assert len(sent) == 1  # the failure's condition, under way
        h.create([make_node("big").capacity(cpu="4", memory="4Gi", pods=10).dict()])
        await h.informers_caught_up()
        h.clock.advance(400)
        h.scheduler.queue.flush_backoff_completed()
        info = h.scheduler.queue.pop()
        assert info is not None
        await h.scheduler.schedule_next(info)
        await settle()
        assert h.node_of("default", "p") is None  # the Binding waits for the write under way
        gate.set()
        await settle()
        assert h.node_of("default", "p") == "big"
        assert pod_scheduled(h)["status"] == "True"
