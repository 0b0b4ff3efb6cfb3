"""What became of each pod in a simulation, including those preemption took away, and the
cluster as the run left it."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.app.workloads import WORKLOAD_KINDS
from scheduler.cluster.resource_kinds import BUILTIN_KINDS
from scheduler.cluster.sim import SimCluster
from scheduler.objects.raw import DEFAULT_NAMESPACE

PREEMPTED = "Preempted"
# The resources a dump of the final cluster leaves out: Events are reported on their own.
_NOT_DUMPED = frozenset({"events"})


@dataclass(slots=True)
class PodOutcome:
    namespace: str
    name: str
    scheduler_name: str
    node: str | None
    # Scheduled, Unschedulable, Error, Gated, NotHandled, Pending, Waiting or Preempted
    status: str
    message: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def _key(meta: Mapping[str, Any]) -> str:
    return f"{meta.get('namespace') or DEFAULT_NAMESPACE}/{meta.get('name')}"


def preempted(
    loaded: Iterable[Mapping[str, Any]],
    remaining: Sequence[Mapping[str, Any]],
    events: Iterable[Mapping[str, Any]],
) -> list[PodOutcome]:
    """The loaded pods gone by the end, each with the node it lost and the pod it made room
    for, from the Preempted event recorded on it."""
    left = {_key(p.get("metadata") or {}) for p in remaining}
    why: dict[str, tuple[str, str]] = {}
    for event in events:
        if event.get("reason") != PREEMPTED:
            continue
        regarding = event.get("regarding") or {}
        related = event.get("related") or {}
        node = str(event.get("note") or "").rpartition(" on node ")[2]
        why[_key(regarding)] = (node, _key(related) if related.get("name") else "")
    outcomes = []
    for pod in loaded:
        if pod.get("kind") != "Pod":
            continue
        meta = pod.get("metadata") or {}
        key = _key(meta)
        if key in left or key not in why:
            continue
        node, by = why[key]
        scheduler_name = str((pod.get("spec") or {}).get("schedulerName") or "default-scheduler")
        message = f"preempted on node {node} to make room for {by or 'a higher-priority pod'}"
        outcomes.append(
            PodOutcome(
                str(meta.get("namespace") or DEFAULT_NAMESPACE),
                str(meta["name"]),
                scheduler_name,
                node or None,
                PREEMPTED,
                message,
            )
        )
    return outcomes


def final_cluster(sim: SimCluster) -> dict[str, list[dict[str, Any]]]:
    """Every stored object by resource, Events aside."""
    dump = {}
    for kind in (*BUILTIN_KINDS, *WORKLOAD_KINDS):
        if kind.resource not in _NOT_DUMPED and (stored := sim.objects(kind.resource)):
            dump[kind.resource] = [dict(o) for o in stored]
    return dump
