"""Explaining one pod of a cluster: snapshot, run, fixes, and the proof that nothing acted."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

from scheduler.cluster.port import ClusterClient
from scheduler.config import EffectiveProfile
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config.feature_gates import FeatureGates
from scheduler.core.explain.as_pending import UnboundPod
from scheduler.core.explain.cluster_state import DEFAULT_SYNC_TIMEOUT
from scheduler.core.explain.cluster_state import cancel_background
from scheduler.core.explain.cluster_state import load_snapshot
from scheduler.core.explain.evaluation import explain_pod
from scheduler.core.explain.fixes import nearest_fixes
from scheduler.core.explain.model import SCHEDULABLE
from scheduler.core.explain.model import SKIPPED
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.model import Reported
from scheduler.core.explain.permit_run import follow_placement
from scheduler.framework.clock import SystemClock
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.errors import SchedulerError
from scheduler.framework.spec import PluginSpec
from scheduler.objects.pod import Pod

# Seed of the random choices the scheduler makes (tie-breaks, preemption's starting node).
DEFAULT_SEED = 0


async def explain_in(
    client: ClusterClient,
    namespace: str,
    name: str,
    config: KubeSchedulerConfiguration,
    profiles: Sequence[EffectiveProfile],
    registry: Mapping[str, PluginSpec],
    *,
    seed: int = DEFAULT_SEED,
    sync_timeout: float = DEFAULT_SYNC_TIMEOUT,
    features: FeatureGates | None = None,
) -> Explanation:
    """The explanation of one pod in the cluster behind `client`, which is only read, under
    the feature gates `features` (v1.36's defaults if not given)."""
    unbound = UnboundPod(namespace, name)
    scheduler, read_only = await load_snapshot(
        client,
        config,
        profiles,
        registry,
        clock=SystemClock(),
        seed=seed,
        sync_timeout=sync_timeout,
        features=features,
        view=unbound,
    )
    try:
        raw = scheduler.informers["pods"].store.get(namespace, name)
        if raw is None:
            raise SchedulerError(f"pod {namespace}/{name} not found (or it has finished)")
        pod = Pod.from_dict(raw)
        profile = scheduler.profiles.get(pod.scheduler_name)
        if profile is None:
            known = ", ".join(scheduler.profiles)
            raise SchedulerError(
                f'pod {pod.key} names schedulerName "{pod.scheduler_name}", which no profile '
                f"of the configuration has ({known})"
            )
        table, state = scheduler.cache.table, CycleState()
        nominations = scheduler.queue.nominated_pods_by_node()
        explanation = explain_pod(profile, pod, table, nominations, state)
        if explanation.outcome != SKIPPED:
            explanation.fixes = nearest_fixes(profile, pod, explanation, table)
        if explanation.outcome == SCHEDULABLE:
            # Last: it assumes pods on the snapshot.
            await follow_placement(scheduler, profile, pod, state, explanation)
        # A bound pod is read as pending (see as_pending.py): its conditions are not its own.
        explanation.bound_to = unbound.bound_to
        explanation.reported = None if unbound.bound_to else Reported.of(raw)
        explanation.created = pod.creation_timestamp
        explanation.cancelled_actions = cancel_background(scheduler)
    finally:
        await scheduler.stop()
    if read_only.refused:
        # Refused, so nothing was written; but a plugin tried, and the report may lack it.
        raise SchedulerError("a plugin tried to write: " + "; ".join(read_only.refused))
    return explanation
