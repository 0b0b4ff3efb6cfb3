"""A fault in the scheduling loop's machinery ends the process with 255, as klog.Fatal would."""

from __future__ import annotations

import asyncio

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
