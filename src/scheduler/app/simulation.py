"""Run the scheduler core against the in-memory cluster until every pod is placed or explained."""

from __future__ import annotations

import asyncio
import gc
import random
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from scheduler.app.feature_gates import check_gated_kinds
from scheduler.app.gangs import GroupOutcome
from scheduler.app.gangs import group_outcomes
from scheduler.app.outcomes import PodOutcome
from scheduler.app.outcomes import final_cluster
from scheduler.app.outcomes import preempted
from scheduler.app.scenario import ordered_for_loading
from scheduler.app.startup_gc import CollectionHold
from scheduler.app.workloads import WORKLOAD_KINDS
from scheduler.app.workloads import expand_workloads
from scheduler.cluster.sim import SimCluster
from scheduler.cluster.sim.claim_controller import ResourceClaimController
from scheduler.cluster.sim.pv_controller import PVBinderController
from scheduler.config import EffectiveProfile
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config.feature_gates import FeatureGates
from scheduler.core.scheduler import Scheduler
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.clock import Clock
from scheduler.framework.clock import SystemClock
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConfigError
from scheduler.framework.errors import SchedulerError
from scheduler.framework.spec import PluginSpec
from scheduler.objects.pod import Pod
from scheduler.observability import SchedulerMetrics

ProgressCallback = Callable[[int, int], None]
# Seeds chosen for a run are below this, short enough to retype.
SEED_LIMIT = 1_000_000
_CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")


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
    groups: list[GroupOutcome] = field(default_factory=list)
    # Set when the run hit its wall-clock bound before every pod was placed or explained.
    timed_out: bool = False
    resource_claims: list[dict[str, Any]] = field(default_factory=list)
    # The seed of every random choice in the run: `--seed` repeats it exactly.
    seed: int = 0
    # Every object the simulated cluster holds at the end, Events aside, by resource.
    cluster: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # The plugins that turned each pod still queued away in its last attempt, by pod key.
    rejected_by: dict[str, list[str]] = field(default_factory=dict)

    def count(self, status: str) -> int:
        return sum(1 for p in self.pods if p.status == status)

    @property
    def pods_per_second(self) -> float:
        scheduled = self.count("Scheduled")
        return scheduled / self.scheduling_seconds if self.scheduling_seconds > 0 else 0.0


def new_seed() -> int:
    """A fresh seed for a run not given one; the report prints it so the run can be repeated."""
    return random.SystemRandom().randrange(SEED_LIMIT)


def _caught_up(scheduler: Scheduler, sim: SimCluster) -> bool:
    return all(
        int(informer.resource_version or 0) >= sim.latest_revision(informer.resource)
        for informer in scheduler.informers.values()
    )


# How often the run checks whether it is finished; the scheduler itself never waits on this.
_POLL_SECONDS = 0.005
_PROGRESS_EVERY = 20
# The default wall-clock bound of one run, generous for the largest generated clusters.
DEFAULT_TIMEOUT_SECONDS = 600.0


# A pod backing off after this many failed attempts is taken as settled: a gang that cannot fit
# is retried for ever (as in a real cluster), and a simulation must end.
SETTLED_AFTER_ATTEMPTS = 2


def _settled(scheduler: Scheduler) -> bool:
    """Nothing to try now: no pod active, binding cycles only held at Permit, no API call or
    plugin's one-off work left, and every pod in backoff already retried."""
    queue = scheduler.queue
    if queue.pending_counts().get("active", 0) or scheduler.dispatcher.pending:
        return False
    if scheduler.awaiting_extenders or scheduler.one_off_work:
        return False
    if len(scheduler.binding_tasks) > len(scheduler.waiting_pods):
        return False
    return all(
        info.attempts >= SETTLED_AFTER_ATTEMPTS
        for info in queue.pending_pods()
        if queue.locate(info.key) == "backoff"
    )


async def _wait_idle(
    scheduler: Scheduler, sim: SimCluster, total: int, progress: ProgressCallback | None
) -> None:
    """Until informers have caught up, nothing is active or binding, and no API call is queued."""
    polls = 0
    while True:
        await asyncio.sleep(_POLL_SECONDS)
        polls += 1
        if scheduler.fatal_error is not None:
            error = scheduler.fatal_error
            raise SchedulerError(f"the scheduler failed: {type(error).__name__}: {error}")
        if progress is not None and polls % _PROGRESS_EVERY == 0:
            progress(sim.bound_pods, total)
        if _caught_up(scheduler, sim) and (scheduler.is_idle() or _settled(scheduler)):
            if progress is not None:
                progress(sim.bound_pods, total)
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
    features: FeatureGates | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,  # noqa: ASYNC109 - bounds the whole run
    cluster: SimCluster | None = None,
) -> SimulationResult:
    """Schedule `objects` in memory; stop after `timeout` wall-clock seconds at the latest.
    An empty `cluster` given by the caller is used, so that it can be read afterwards.
    `features` are the feature gates in force (v1.36's defaults if not given)."""
    # As the daemon does (see startup_gc): no automatic collection while the cluster is loaded
    # and listed, then what that built is frozen for the run, so that collections while
    # scheduling walk only what scheduling allocates. Unfrozen at the end: a process may
    # simulate again.
    hold = CollectionHold()
    collecting = gc.isenabled()
    hold.hold()
    try:
        return await _simulate(
            objects,
            config,
            profiles,
            registry,
            hold,
            seed=seed,
            clock=clock,
            progress=progress,
            vectorize=vectorize,
            features=features,
            timeout=timeout,
            cluster=cluster,
        )
    finally:
        hold.release(freeze=False)
        if collecting:
            gc.unfreeze()


async def _simulate(
    objects: Sequence[Mapping[str, Any]],
    config: KubeSchedulerConfiguration,
    profiles: Sequence[EffectiveProfile],
    registry: Mapping[str, PluginSpec],
    hold: CollectionHold,
    *,
    seed: int | None,
    clock: Clock | None,
    progress: ProgressCallback | None,
    vectorize: bool,
    features: FeatureGates | None,
    timeout: float,  # noqa: ASYNC109 - bounds the whole run
    cluster: SimCluster | None,
) -> SimulationResult:
    clock = clock or SystemClock()
    started = time.perf_counter()
    if seed is None:
        seed = new_seed()
    sim = cluster if cluster is not None else SimCluster(clock=clock, rng=random.Random(seed))
    for kind in WORKLOAD_KINDS:
        sim.register_kind(kind)
    check_gated_kinds(objects, features or FeatureGates())
    try:
        # Controllers' names and uids come from the seed too, so a run repeats exactly.
        objects = expand_workloads(objects, random.Random(seed))
        sim.load(ordered_for_loading(objects))
    except (ValueError, APIError) as exc:
        raise ConfigError(str(exc)) from exc
    metrics = SchedulerMetrics()
    scheduler = Scheduler(
        SchedulerSetup(config, profiles, registry, sim, clock),
        rng=random.Random(seed),
        metrics=metrics,
        vectorize=vectorize,
        features=features,
    )
    tasks: list[asyncio.Task[None]] = []
    waiting: set[str] = set()
    rejected_by: dict[str, list[str]] = {}
    timed_out = False
    deadline = time.perf_counter() + timeout
    try:
        if any(o.get("kind") == "PersistentVolumeClaim" for o in objects):
            # No kube-controller-manager here: this one finishes the volume bindings the
            # scheduler starts. Its first pass runs before the informers list, so scheduling
            # starts from settled volumes (new PVs Available, Immediate claims bound).
            pv_controller = PVBinderController(sim)
            await pv_controller.sync()
            tasks.append(asyncio.create_task(pv_controller.run(), name="pv-controller"))
        if any(o.get("kind") in _CLAIM_KINDS for o in objects):
            # The same for claims: claims from templates, and releasing those of gone pods.
            claim_controller = ResourceClaimController(sim)
            await claim_controller.sync()
            tasks.append(
                asyncio.create_task(claim_controller.run(), name="resourceclaim-controller")
            )
        # Everything but pods lists first, so pods meet the claims, volumes and nodes the
        # scenario gave them instead of bouncing off PreEnqueue until those arrive.
        await scheduler.start(pods_last=True)
        await scheduler.wait_synced()
        hold.release(freeze=True)
        scheduling_started = time.perf_counter()
        scheduler.start_scheduling()
        total = sum(1 for o in objects if o.get("kind") == "Pod")
        try:
            await asyncio.wait_for(
                _wait_idle(scheduler, sim, total, progress), deadline - time.perf_counter()
            )
        except TimeoutError:
            timed_out = True
        scheduling_seconds = time.perf_counter() - scheduling_started
        if not timed_out:
            await scheduler.drain_api_writes()
        waiting = {w.pod.key for w in scheduler.waiting_pods}
        rejected_by = {
            info.key: sorted(info.unschedulable_plugins | info.pending_plugins)
            for info in scheduler.queue.pending_pods()
            if info.unschedulable_plugins or info.pending_plugins
        }
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await scheduler.stop()
    raw_pods = [dict(p) for p in sim.objects("pods")]
    pods = [_outcome(Pod.from_dict(raw), scheduler, waiting) for raw in raw_pods]
    pods.extend(preempted(objects, raw_pods, sim.events()))
    groups = group_outcomes(
        [g for kind in POD_GROUP_KINDS for g in _objects(sim, kind)],
        raw_pods,
        waiting,
        scheduler.last_failures,
    )
    return SimulationResult(
        pods=pods,
        nodes=[dict(n) for n in sim.objects("nodes")],
        profiles=list(scheduler.profiles),
        elapsed_seconds=time.perf_counter() - started,
        scheduling_seconds=scheduling_seconds,
        metrics=metrics,
        raw_pods=raw_pods,
        events=[dict(e) for e in sim.events()],
        groups=groups,
        timed_out=timed_out,
        resource_claims=[dict(c) for c in sim.objects("resourceclaims")],
        seed=seed,
        cluster=final_cluster(sim),
        rejected_by=rejected_by,
    )


# PodGroups of every dialect the in-memory cluster serves.
POD_GROUP_KINDS = ("podgroups", "podgroups.scheduling.sigs.k8s.io", "podgroups.scheduling.k8s.io")


def _objects(sim: SimCluster, resource: str) -> list[dict[str, Any]]:
    return [dict(o) for o in sim.objects(resource)]


def _outcome(pod: Pod, scheduler: Scheduler, waiting: set[str]) -> PodOutcome:
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
    if pod.key in waiting:
        return outcome(None, "Waiting", "waiting at Permit when the simulation ended")
    if pod.scheduling_gates:
        gates = " ".join(pod.scheduling_gates)
        return outcome(None, "Gated", f"waiting for scheduling gates: [{gates}]")
    for condition in (pod.raw.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            status = "Error" if condition.get("reason") == "SchedulerError" else "Unschedulable"
            return outcome(None, status, str(condition.get("message", "")))
    message = scheduler.last_failures.get(pod.key, "")
    if not message:
        return outcome(None, "Pending", "")
    return outcome(None, "Error" if pod.key in scheduler.errored else "Unschedulable", message)
