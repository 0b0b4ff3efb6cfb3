"""A fault in the scheduling loop's machinery ends the process with 255, as klog.Fatal would."""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler.app.daemon import EXIT_SCHEDULER_FAILED
from scheduler.cluster.sim import SimCluster
from scheduler.framework.clock import SystemClock
from tests.app.daemon_on_sim import DEADLINE_S
from tests.app.daemon_on_sim import scheduling_daemon
from tests.app.daemon_on_sim import secure_get


async def test_a_loop_fault_shuts_down_and_exits_255_without_a_health_check_of_its_own() -> None:
    daemon = scheduling_daemon("default-scheduler", SimCluster(clock=SystemClock()))

    async def broken_pop() -> None:
        raise RuntimeError("the queue's heap is corrupt")

    daemon.scheduler.queue.pop_wait = broken_pop  # type: ignore[method-assign, assignment]
    failed = asyncio.Event()
    daemon.scheduler.on_fatal(lambda _exc: failed.set())
    await daemon.start()
    try:
        async with asyncio.timeout(DEADLINE_S):
            await failed.wait()
        # Health stays kube-scheduler's: the process ends instead of failing a check.
        assert await secure_get(daemon.port, "/livez?verbose") == (
            200,
            "[+]ping ok\nlivez check passed\n",
        )
        async with asyncio.timeout(DEADLINE_S):
            assert await daemon.wait() == EXIT_SCHEDULER_FAILED
    except BaseException:
        await daemon.shutdown()
        raise


class SharedBreakableCluster(SimCluster):
    """One cluster behind two daemons whose Lease reads can be made to fail with a fault
    no API client raises: a bug, which must end the process, not the elector alone."""

    def __init__(self) -> None:
        super().__init__(clock=SystemClock())
        self.lease_reads_break = False

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        if resource == "leases" and self.lease_reads_break:
            raise RuntimeError("a bug in reading the Lease")
        return await super().get(resource, namespace, name)

    async def close(self) -> None:
        return None


async def test_a_fault_ending_leader_election_is_fatal_not_silent() -> None:
    cluster = SharedBreakableCluster()
    leader = scheduling_daemon("default-scheduler", cluster, leader_elect=True)
    await leader.start()
    standby = scheduling_daemon("default-scheduler", cluster, leader_elect=True)
    failed = asyncio.Event()
    standby.scheduler.on_fatal(lambda _exc: failed.set())
    await standby.start()
    try:
        assert leader.is_leader and not standby.is_leader
        cluster.lease_reads_break = True
        # Its next attempt at the Lease fails; a standby that stopped competing without a
        # word would leave the pair without a replacement for its leader.
        async with asyncio.timeout(DEADLINE_S):
            await failed.wait()
            assert await standby.wait() == EXIT_SCHEDULER_FAILED
    finally:
        cluster.lease_reads_break = False
        await leader.shutdown()
        if not failed.is_set():
            await standby.shutdown()
