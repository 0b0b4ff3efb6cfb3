"""Drive the whole scheduler against the in-memory cluster on a fake clock, one step at a time."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from scheduler.cluster.sim import SimCluster
from scheduler.config import load_config_dict
from scheduler.config.feature_gates import FeatureGates
from scheduler.core.scheduler import Scheduler
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.spec import PluginSpec
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import FakeClock

# Upper bound on one binding cycle at its Bind while the harness settles.
BIND_WAIT_S = 10.0

CONFIG_HEADER = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
}


class Harness:
    """The real Scheduler, SimCluster and informers; tests decide when each step happens."""

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        extra_plugins: Sequence[PluginSpec] = (),
        seed: int = 7,
        features: FeatureGates | None = None,
    ) -> None:
        """`features` are the feature gates in force (v1.36's defaults if not given)."""
        self.clock = FakeClock()
        self.sim = SimCluster(clock=self.clock)
        registry = PluginRegistry.discover()
        for spec in extra_plugins:
            # In-tree plugins under test may already be installed as entry points.
            if spec.name not in registry:
                registry.add(spec)
        self.registry = registry
        self.config, self.profiles = load_config_dict(
            {**CONFIG_HEADER, **(config or {})},
            registry,
            features.enabled if features is not None else None,
        )
        self.scheduler = Scheduler(
            SchedulerSetup(self.config, self.profiles, registry, self.sim, self.clock),
            rng=random.Random(seed),
            features=features,
        )
        # Set by a test whose PreBind plugin holds pods until the test lets them go: binding
        # cycles at PreBind then count as settled, as those held at Permit always do.
        self.pre_bind_holds_pods = False

    async def __aenter__(self) -> Harness:
        # What every replica runs; the scheduling loop is left out: tests pop and schedule
        # themselves (`schedule_active`), one step at a time, as the leader, so the plugins'
        # leader work (status writers, reconciles) runs as it does once the loop would start.
        await self.scheduler.start()
        await self.scheduler.wait_synced()
        self.scheduler.start_leader_work()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.scheduler.stop()

    def create(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self.sim.load(objects)

    async def informers_caught_up(self) -> None:
        """Yield to the loop until every informer has handled every change made so far, with
        binding cycles left wherever they are (one may be held by a test's plugin)."""
        for _ in range(10_000):
            await asyncio.sleep(0)
            if all(
                int(i.resource_version or 0) >= self.sim.latest_revision(i.resource)
                for i in self.scheduler.informers.values()
            ):
                return
        raise AssertionError("the informers did not catch up")

    async def quiesce(self) -> None:
        """Yield to the loop until informers, binding cycles and API writes have nothing left.

        Binding cycles held at Permit count as settled (only the clock or an event can move
        them on), until their wait ends; so do those at PreBind when `pre_bind_holds_pods`.
        """
        for _ in range(10_000):
            await asyncio.sleep(0)
            caught_up = all(
                int(i.resource_version or 0) >= self.sim.latest_revision(i.resource)
                for i in self.scheduler.informers.values()
            )
            scheduler = self.scheduler
            held = sum(1 for waiting_pod in scheduler.waiting_pods if not waiting_pod.ended)
            if self.pre_bind_holds_pods:
                held += len(scheduler.pods_in_pre_bind)
            waiting = len(scheduler.binding_tasks) == held
            if caught_up and waiting and scheduler.api_writes_pending == 0:
                return
            if scheduler.bindings.binding:
                # A Bind may be out on real I/O (an HTTP extender's bind verb): wait for a
                # binding cycle to end rather than for turns of the loop; the timeout only
                # bounds a cycle that never ends.
                await asyncio.wait(
                    set(scheduler.binding_tasks),
                    timeout=BIND_WAIT_S,
                    return_when=asyncio.FIRST_COMPLETED,
                )
        raise AssertionError("the scheduler did not settle")

    async def settle_until(self, done: Callable[[], bool]) -> None:
        """Settle until `done`, for work that runs beside the binding cycles (background
        releases, status writers); fail if it never comes."""
        for _ in range(50):
            await self.quiesce()
            if done():
                return
        raise AssertionError("the awaited state never came")

    async def schedule_active(self) -> int:
        """Schedule every pod in activeQ (not backoff), settling after each; returns how many."""
        await self.quiesce()
        count = 0
        while self.scheduler.queue.pending_counts().get("active", 0):
            info = self.scheduler.queue.pop()
            assert info is not None
            await self.scheduler.schedule_next(info)
            count += 1
            await self.quiesce()
        return count

    def pod(self, namespace: str, name: str) -> dict[str, Any]:
        for pod in self.sim.objects("pods"):
            meta = pod["metadata"]
            if meta["namespace"] == namespace and meta["name"] == name:
                return pod
        raise KeyError(f"{namespace}/{name}")

    def node_of(self, namespace: str, name: str) -> str | None:
        node = (self.pod(namespace, name).get("spec") or {}).get("nodeName")
        return str(node) if node else None

    def scheduled_message(self, namespace: str, name: str) -> str:
        """The message of the pod's PodScheduled condition: always the latest word, where a
        repeated Event keeps its first note (Events are correlated as upstream's are)."""
        conditions = self.pod(namespace, name).get("status", {}).get("conditions") or []
        [condition] = [c for c in conditions if c["type"] == "PodScheduled"]
        return str(condition.get("message", ""))

    def event_notes(self, namespace: str, name: str, reason: str) -> list[str]:
        return [
            str(e.get("note"))
            for e in self.sim.events(f"{namespace}/{name}")
            if e.get("reason") == reason
        ]
