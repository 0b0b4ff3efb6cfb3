"""Helpers for tests that run a daemon against the in-memory cluster on the real clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from scheduler.app.daemon import Daemon
from scheduler.app.run_options import RunOptions
from scheduler.cluster.sim import SimCluster
from scheduler.config import load_config_dict
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.clock import SystemClock
from scheduler.runtime.discovery import PluginRegistry

DEADLINE_S = 10.0
OPTIONS = RunOptions(bind_address="127.0.0.1", secure_port=0, shutdown_timeout=1.0)


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
) -> Daemon:
    """A scheduling daemon with one default profile on `cluster`, without leader election
    unless asked (`delay_caches`: `delayCacheUntilActive`)."""
    registry = PluginRegistry.discover()
    document = config_with_profile(
        scheduler_name, leader_elect=leader_elect, delay_caches=delay_caches
    )
    config, profiles = load_config_dict(document, registry)
    return Daemon(
        SchedulerSetup(config, profiles, registry, cluster, SystemClock()), options=OPTIONS
    )
