"""Run the scheduler core against the in-memory cluster until every pod is placed or explained."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler.app.scenario import ordered_for_loading
from scheduler.backend.queue import run_queue_flushes
from scheduler.cluster.sim import SimCluster
from scheduler.cluster.sim.pv_controller import PVBinderController
from scheduler.config import EffectiveProfile, KubeSchedulerConfiguration
from scheduler.core.scheduler import Scheduler
from scheduler.framework.clock import Clock, SystemClock
from scheduler.framework.errors import APIError, ConfigError
from scheduler.framework.spec import PluginSpec
from scheduler.objects.pod import Pod
from scheduler.observability import SchedulerMetrics

ProgressCallback = Callable[[int, int], None]


@dataclass(slots=True)
class PodOutcome:
    namespace: str
    name: str
    scheduler_name: str
    node: str | None
    status: str  # Scheduled, Unschedulable, Gated, NotHandled, Pending
    message: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class SimulationResult:
    pods: list[PodOutcome]
    nodes: list[dict[str, Any]]
    profiles: list[str]
    elapsed_seconds: float
    scheduling_seconds: float
    metrics: SchedulerMetrics
    raw_pods: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for p in self.pods if p.status == status)

    @property
    def pods_per_second(self) -> float:
        scheduled = self.count("Scheduled")
        return scheduled / self.scheduling_seconds if self.scheduling_seconds > 0 else 0.0


def _caught_up(scheduler: Scheduler, sim: SimCluster) -> bool:
    return all(
        int(informer.resource_version or 0) >= sim.latest_revision(informer.resource)
        for informer in scheduler.informers.values()
    )


def _bound(sim: SimCluster) -> int:
    return sum(1 for p in sim.objects("pods") if (p.get("spec") or {}).get("nodeName"))


# How often the run checks whether it is finished; the scheduler itself never waits on this.
_POLL_SECONDS = 0.005
_PROGRESS_EVERY = 20


async def _wait_idle(
    scheduler: Scheduler, sim: SimCluster, total: int, progress: ProgressCallback | None
) -> None:
    """Until informers have caught up, nothing is active or binding, and no API call is queued."""
    polls = 0
    while True:
        await asyncio.sleep(_POLL_SECONDS)
        polls += 1
        if progress is not None and polls % _PROGRESS_EVERY == 0:
            progress(_bound(sim), total)
        if _caught_up(scheduler, sim) and scheduler.is_idle():
            if progress is not None:
                progress(_bound(sim), total)
            return


async def simulate(
    objects: Sequence[Mapping[str, Any]],
    config: KubeSchedulerConfiguration,
    profiles: Sequence[EffectiveProfile],
    registry: Mapping[str, PluginSpec],
    *,
    seed: int | None = None,
    clock: Clock | None = None,
    progress: ProgressCallback | None = None,
    vectorize: bool = True,
) -> SimulationResult:
    clock = clock or SystemClock()
    started = time.perf_counter()
    sim = SimCluster(clock=clock)
    try:
        sim.load(ordered_for_loading(dict(o) for o in objects))
    except (ValueError, APIError) as exc:
        raise ConfigError(str(exc)) from exc
    metrics = SchedulerMetrics()
    scheduler = Scheduler(
        config=config,
        profiles=profiles,
        registry=registry,
        client=sim,
        clock=clock,
        rng=random.Random(seed),
        metrics=metrics,
        vectorize=vectorize,
    )
    tasks: list[asyncio.Task[None]] = []
    try:
        if any(o.get("kind") == "PersistentVolumeClaim" for o in objects):
            # No kube-controller-manager here: this one finishes the volume bindings the
            # scheduler starts. Its first pass runs before the informers list, so scheduling
            # starts from settled volumes (new PVs Available, Immediate claims bound).
            pv_controller = PVBinderController(sim)
            await pv_controller.sync()
            tasks.append(asyncio.create_task(pv_controller.run(), name="pv-controller"))
        for informer in scheduler.build_informers():
            tasks.append(asyncio.create_task(informer.run(), name=f"informer:{informer.name}"))
        await asyncio.gather(*(i.synced.wait() for i in scheduler.informers.values()))
        scheduling_started = time.perf_counter()
        tasks.append(
            asyncio.create_task(run_queue_flushes(scheduler.queue, clock), name="queue-flushes")
        )
        tasks.append(asyncio.create_task(scheduler.run(), name="scheduling-loop"))
        total = sum(1 for o in objects if o.get("kind") == "Pod")
        await _wait_idle(scheduler, sim, total, progress)
        scheduling_seconds = time.perf_counter() - scheduling_started
        await scheduler.drain_api_writes()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await scheduler.stop()
    raw_pods = [dict(p) for p in sim.objects("pods")]
    pods = [_outcome(Pod.from_dict(raw), scheduler) for raw in raw_pods]
    return SimulationResult(
        pods=pods,
        nodes=[dict(n) for n in sim.objects("nodes")],
        profiles=list(scheduler.profiles),
        elapsed_seconds=time.perf_counter() - started,
        scheduling_seconds=scheduling_seconds,
        metrics=metrics,
        raw_pods=raw_pods,
        events=[dict(e) for e in sim.events()],
    )


def _outcome(pod: Pod, scheduler: Scheduler) -> PodOutcome:
    def outcome(node: str | None, status: str, message: str) -> PodOutcome:
        return PodOutcome(pod.namespace, pod.name, pod.scheduler_name, node, status, message)

    if pod.node_name:
        return outcome(pod.node_name, "Scheduled", "")
    if not scheduler.responsible_for(pod):
        return outcome(
            None,
            "NotHandled",
            f'no profile has schedulerName "{pod.scheduler_name}"; the pod was left alone',
        )
    if pod.scheduling_gates:
        gates = " ".join(pod.scheduling_gates)
        return outcome(None, "Gated", f"waiting for scheduling gates: [{gates}]")
    for condition in (pod.raw.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return outcome(None, "Unschedulable", str(condition.get("message", "")))
    message = scheduler.last_failures.get(pod.key, "")
    return outcome(None, "Unschedulable" if message else "Pending", message)
