"""A fault in the scheduling loop's machinery fails /livez and ends the process non-zero."""

from __future__ import annotations

import asyncio
import ssl

import aiohttp

from scheduler.app.daemon import EXIT_SCHEDULER_FAILED
from scheduler.app.daemon import Daemon
from scheduler.app.run_options import RunOptions
from scheduler.cluster.sim import SimCluster
from scheduler.config import load_config_dict
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.clock import SystemClock
from scheduler.runtime.discovery import PluginRegistry

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": False},
}
DEADLINE_S = 10.0


async def _livez(port: int) -> tuple[int, str]:
    tls = ssl.create_default_context()
    tls.check_hostname = False
    tls.verify_mode = ssl.CERT_NONE
    connector = aiohttp.TCPConnector(ssl=tls)
    async with (
        aiohttp.ClientSession(connector=connector) as client,
        client.get(f"https://127.0.0.1:{port}/livez?verbose") as response,
    ):
        return response.status, await response.text()


async def test_a_loop_fault_fails_livez_and_exits_255() -> None:
    registry = PluginRegistry.discover()
    config, profiles = load_config_dict(CONFIG, registry)
    clock = SystemClock()
    daemon = Daemon(
        SchedulerSetup(config, profiles, registry, SimCluster(clock=clock), clock),
        options=RunOptions(bind_address="127.0.0.1", secure_port=0, shutdown_timeout=1.0),
    )

    async def broken_pop() -> None:
        raise RuntimeError("the queue's heap is corrupt")

    daemon.scheduler.queue.pop_wait = broken_pop  # type: ignore[method-assign, assignment]
    failed = asyncio.Event()
    daemon.scheduler.on_fatal(lambda _exc: failed.set())
    await daemon.start()
    try:
        async with asyncio.timeout(DEADLINE_S):
            await failed.wait()
        status, body = await _livez(daemon.port)
        assert status == 500
        assert "[-]scheduler-failed failed" in body
        async with asyncio.timeout(DEADLINE_S):
            assert await daemon.wait() == EXIT_SCHEDULER_FAILED
    except BaseException:
        await daemon.shutdown()
        raise
