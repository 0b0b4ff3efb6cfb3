"""The scheduling loop waits for room among the binding cycles: while Bindings are slow, pods
stay in the queue instead of piling up in binding cycles; pods waiting at Permit take no room."""

from __future__ import annotations

import asyncio

from scheduler.objects.pod import Pod
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.gangs import COSCHEDULING_CONFIG
from tests.integration.gangs import bound_count
from tests.integration.gangs import gang_pods
from tests.integration.gangs import nodes
from tests.integration.gangs import pod_group
from tests.integration.harness import Harness


async def _settle() -> None:
    for _ in range(200):
        await asyncio.sleep(0)


async def test_no_more_binding_cycles_than_the_limit_while_bindings_hang() -> None:
    async with Harness() as h:
        h.scheduler.bindings.limit = 2
        gate = asyncio.Event()
        real_bind = h.sim.bind

        async def slow_bind(pod: Pod, node_name: str) -> None:
            await gate.wait()
            await real_bind(pod, node_name)

        h.sim.bind = slow_bind  # type: ignore[method-assign]
        h.create(
            [
                make_node("n").capacity(cpu="8", pods="110").dict(),
                *(make_pod(f"p{i}").req(cpu="1").dict() for i in range(5)),
            ]
        )
        await h.quiesce()
        loop = asyncio.create_task(h.scheduler.run())
        try:
            await _settle()
            assert len(h.scheduler.binding_tasks) == 2
            assert h.scheduler.queue.pending_counts().get("active", 0) == 3
            # kube-scheduler's gauge of binding goroutines counts the cycles in flight.
            binding = {"operation": "binding"}
            registry = h.scheduler.metrics.registry
            assert registry.get_sample_value("scheduler_goroutines", binding) == 2
            gate.set()
            for _ in range(20):
                await _settle()
                if sum(1 for p in h.sim.objects("pods") if p["spec"].get("nodeName")) == 5:
                    break
            assert all(p["spec"].get("nodeName") == "n" for p in h.sim.objects("pods"))
            await _settle()
            assert registry.get_sample_value("scheduler_goroutines", binding) == 0
        finally:
            loop.cancel()
            await asyncio.gather(loop, return_exceptions=True)


async def test_members_waiting_at_permit_take_no_room() -> None:
    # A gang of four with room for two binding cycles: the first three wait at Permit for the
    # fourth, which must still be scheduled.
    async with Harness(COSCHEDULING_CONFIG) as h:
        h.scheduler.bindings.limit = 2
        h.create([*nodes(2), pod_group("train", 4), *gang_pods("train", 4)])
        await h.quiesce()
        loop = asyncio.create_task(h.scheduler.run())
        try:
            for _ in range(20):
                await _settle()
                if bound_count(h, "train") == 4:
                    break
            assert bound_count(h, "train") == 4
        finally:
            loop.cancel()
            await asyncio.gather(loop, return_exceptions=True)
