"""Run each workload controller once over a scenario: Deployments first (they make ReplicaSets),
then every controller that makes pods, each seeing what the scenario already holds."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from scheduler.app.workloads.daemonset import daemon_pods
from scheduler.app.workloads.job import job_pods
from scheduler.app.workloads.naming import GeneratedNames
from scheduler.app.workloads.owners import Owner
from scheduler.app.workloads.owners import controller_of
from scheduler.app.workloads.owners import object_key
from scheduler.app.workloads.owners import with_uid
from scheduler.app.workloads.replicas import deployment_replica_set
from scheduler.app.workloads.replicas import replica_pods
from scheduler.app.workloads.statefulset import statefulset_objects
from scheduler.cluster.resource_kinds import ResourceKind
from scheduler.cluster.resource_kinds import kind
from scheduler.framework.errors import ConfigError
from scheduler.objects.raw import DEFAULT_NAMESPACE

# The workload kinds the scheduler itself never reads, served only so a simulation holds them.
WORKLOAD_KINDS: tuple[ResourceKind, ...] = (
    kind("jobs", "batch/v1", "Job", namespaced=True),
    kind("daemonsets", "apps/v1", "DaemonSet", namespaced=True),
)

# The controllers simulated, by (API group, kind); each makes its pods from spec.template.
CONTROLLED = {
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("", "ReplicationController"),
}


# Workloads known but not expanded, with what to give instead.
_NOT_EXPANDED = {
    ("batch", "CronJob"): "it creates Jobs on a schedule; give the Job it would create instead",
}


def refuse_unexpanded(obj: Mapping[str, Any]) -> None:
    """Raise, naming the object, for a workload kind the simulation does not expand."""
    why = _NOT_EXPANDED.get(_group_kind(obj))
    if why is not None:
        meta = obj.get("metadata") or {}
        where = f"{meta.get('namespace') or DEFAULT_NAMESPACE}/{meta.get('name')}"
        raise ConfigError(f"{obj.get('kind')} {where}: not simulated: {why}")


def _group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("apiVersion") or "").rpartition("/")[0], str(obj.get("kind") or "")


def expand_workloads(
    objects: Iterable[Mapping[str, Any]], rng: random.Random
) -> list[dict[str, Any]]:
    """`objects` with every workload given a uid, followed by what its controller creates."""
    result: list[dict[str, Any]] = []
    owners: list[Owner] = []
    for obj in objects:
        refuse_unexpanded(obj)
        if _group_kind(obj) in CONTROLLED:
            owner = with_uid(obj, rng)
            owners.append(owner)
            result.append(owner.raw)
        else:
            result.append(dict(obj))
    # What the scenario already holds for each controller, so the controller only adds to it.
    controlled: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for obj in result:
        if (controller := controller_of(obj)) is not None:
            controlled[controller].append(obj)
    taken = {object_key(o) for o in result}
    for deployment in [o for o in owners if o.kind == "Deployment"]:
        if not any(c.get("kind") == "ReplicaSet" for c in controlled[deployment.key]):
            replica_set = Owner(deployment_replica_set(deployment, rng))
            owners.append(replica_set)
            result.append(replica_set.raw)
    nodes = [o for o in result if o.get("kind") == "Node"]
    names = GeneratedNames(rng)
    for taken_kind, _, name in taken:
        if taken_kind == "Pod":
            names.take(name)
    for owner in owners:
        mine = [o for o in controlled[owner.key] if o.get("kind") == "Pod"]
        if owner.kind in ("ReplicaSet", "ReplicationController"):
            result.extend(replica_pods(owner, mine, names))
        elif owner.kind == "StatefulSet":
            result.extend(statefulset_objects(owner, taken))
        elif owner.kind == "Job":
            result.extend(job_pods(owner, mine, names))
        elif owner.kind == "DaemonSet":
            result.extend(daemon_pods(owner, nodes, mine, names))
    return result
