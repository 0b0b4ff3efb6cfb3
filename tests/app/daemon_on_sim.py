"""Helpers for tests that run a daemon against the in-memory cluster on the real clock."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import aiohttp

from scheduler.app.daemon import Daemon
from scheduler.app.run_options import RunOptions
from scheduler.cluster.port import ObjectList
from scheduler.cluster.sim import SimCluster
from scheduler.config import load_config_dict
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.clock import SystemClock
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.e2e.processes import free_loopback_port

DEADLINE_S = 10.0
# The secure port off (0): most tests need no port, and then no certificate either.
OPTIONS = RunOptions(bind_address="127.0.0.1", secure_port=0, shutdown_timeout=1.0)


def serving_options() -> RunOptions:
    """OPTIONS with the secure port on, on a port free right now."""
    return replace(OPTIONS, secure_port=free_loopback_port())


def config_with_profile(
    scheduler_name: str, *, leader_elect: bool = False, delay_caches: bool = False
) -> dict[str, object]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": leader_elect},
        "delayCacheUntilActive": delay_caches,
        "profiles": [{"schedulerName": scheduler_name}],
    }


async def until(condition: Callable[[], bool]) -> None:
    """Until `condition()` holds, checked every 10 ms while the daemon's tasks run."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {DEADLINE_S} s")
        await asyncio.sleep(0.01)


def scheduling_daemon(
    scheduler_name: str,
    cluster: SimCluster,
    *,
    leader_elect: bool = False,
    delay_caches: bool = False,
    options: RunOptions | None = None,
) -> Daemon:
    """A scheduling daemon with one default profile on `cluster`, without leader election
    unless asked (`delay_caches`: `delayCacheUntilActive`), serving its secure port on a free
    port unless `options` say otherwise."""
    registry = PluginRegistry.discover()
    document = config_with_profile(
        scheduler_name, leader_elect=leader_elect, delay_caches=delay_caches
    )
    config, profiles = load_config_dict(document, registry)
    return Daemon(
        SchedulerSetup(config, profiles, registry, cluster, SystemClock()),
        options=options if options is not None else serving_options(),
    )


async def secure_get(port: int, path: str) -> tuple[int, str]:
    """GET `path` on a daemon's secure port, its self-signed certificate unchecked."""
    tls = ssl.create_default_context()
    tls.check_hostname = False
    tls.verify_mode = ssl.CERT_NONE
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=tls)) as client,
        client.get(f"https://127.0.0.1:{port}{path}") as response,
    ):
        return response.status, await response.text()


class RecordingCluster(SimCluster):
    """The in-memory cluster, noting its pod lists and Lease writes in the order they came."""

    def __init__(self) -> None:
        super().__init__(clock=SystemClock())
        self.calls: list[str] = []

    async def list(
        self, resource: str, *, namespace: str | None = None, field_selector: str | None = None
    ) -> ObjectList:
        if resource == "pods":
            self.calls.append("list pods")
        return await super().list(resource, namespace=namespace, field_selector=field_selector)

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        if resource == "leases":
            self.calls.append("take lease")
        return await super().create(resource, obj)

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        if resource == "leases" and self._takes_over(obj):
            self.calls.append("take lease")
        return await super().update(resource, obj)

    def _takes_over(self, lease: Mapping[str, Any]) -> bool:
        name = lease["metadata"]["name"]
        current = next(o for o in self.objects("leases") if o["metadata"]["name"] == name)
        holder = lease["spec"].get("holderIdentity")
        return bool(holder) and current["spec"].get("holderIdentity") != holder


def cluster_with_a_pending_pod() -> RecordingCluster:
    cluster = RecordingCluster()
    cluster.load([make_node("n1").dict(), make_pod("p", "ns").scheduler("production").dict()])
    return cluster


def bound(cluster: SimCluster, pod: str) -> bool:
    return any(
        p["metadata"]["name"] == pod and p["spec"].get("nodeName") for p in cluster.objects("pods")
    )
