"""The cluster as the scheduler sees it, loaded once through its own informers and cache.

A `Scheduler` is built on a read-only client and its informers list every resource the
profiles need; they are then stopped, so the state explained is one consistent snapshot. The
scheduling loop never runs: nothing is popped, bound or recorded.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from collections.abc import Sequence

from scheduler.cluster.informer import Informer
from scheduler.cluster.port import ClusterClient
from scheduler.cluster.read_only import ReadOnlyCluster
from scheduler.cluster.read_only import View
from scheduler.config import EffectiveProfile
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config.feature_gates import FeatureGates
from scheduler.core.scheduler import Scheduler
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.clock import Clock
from scheduler.framework.errors import SchedulerError
from scheduler.framework.spec import PluginSpec

# How long listing may take before explain gives up (a large cluster lists in seconds).
DEFAULT_SYNC_TIMEOUT = 60.0


async def load_snapshot(
    client: ClusterClient,
    config: KubeSchedulerConfiguration,
    profiles: Sequence[EffectiveProfile],
    registry: Mapping[str, PluginSpec],
    *,
    clock: Clock,
    seed: int,
    sync_timeout: float = DEFAULT_SYNC_TIMEOUT,
    features: FeatureGates | None = None,
    view: View | None = None,
) -> tuple[Scheduler, ReadOnlyCluster]:
    """A scheduler whose cache and listers hold the cluster's current state, as `view`
    shows it (see `UnboundPod`); the caller calls `scheduler.stop()` when done."""
    read_only = ReadOnlyCluster(client, "explain is read-only", view)
    scheduler = Scheduler(
        SchedulerSetup(config, profiles, registry, read_only, clock),
        rng=random.Random(seed),
        features=features,
    )
    informers = scheduler.build_informers()
    tasks = [asyncio.create_task(i.run(), name=f"informer:{i.name}") for i in informers]
    try:
        await asyncio.wait_for(asyncio.gather(*(i.synced.wait() for i in informers)), sync_timeout)
    except TimeoutError as exc:
        raise SchedulerError(not_listed(informers, sync_timeout)) from exc
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return scheduler, read_only


def not_listed(informers: Sequence[Informer], timeout: float) -> str:
    """Which informers had not listed in time and, if any failed, the latest reason (an
    unreachable server, a refusal), so an operator need not read the retry warnings."""
    waiting = [i for i in informers if not i.has_synced]
    names = ", ".join(i.name for i in waiting)
    message = f"the cluster did not list within {timeout:g}s (still listing: {names})"
    failed = next((i for i in waiting if i.last_error), None)
    if failed is not None:
        message += f"; {failed.name} last failed with: {failed.last_error}"
    return message


def cancel_background(scheduler: Scheduler) -> list[str]:
    """Cancel the background work plugins started, before it has had a chance to run.

    Called with no await since the plugins ran, so none of these tasks has started: a task
    cancelled before its first step never runs its body. Returns the tasks' names.
    """
    names = sorted(task.get_name() for task in scheduler.background)
    for task in list(scheduler.background):
        task.cancel()
    return names
