"""What a pod derives from its spec alone, parsed once per distinct spec.

The replicas of a Deployment, a Job or a ReplicaSet carry the same spec, so a fleet of ten
thousand pods holds a few dozen different ones. Parsing a spec (its shape checks, every
container's requests, the tolerations, the node affinity) is most of what reading a pod costs,
and at start-up the scheduler reads every pod in the cluster before it may bind the first.
So the fields below are parsed for the first pod of a spec and shared, read-only, by the pods
after it: the same objects, which also keeps one copy of them in memory instead of one a pod.

A spec is recognised by its JSON text without `nodeName` (the one field that differs between
the placed replicas of one template). Two specs with the same text are equal, so they derive
the same fields; two equal specs written in another key order only miss the memo. A spec that
fails to parse is never remembered: its error is raised again for every pod that has it. The
memo keeps the specs seen last, up to `MEMO_SIZE`, and forgets the oldest first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Final

import orjson

from scheduler.objects import shapes
from scheduler.objects.integers import bounded_int
from scheduler.objects.node_selector import NodeAffinity
from scheduler.objects.node_selector import parse_node_affinity
from scheduler.objects.pod_ports import HostPort
from scheduler.objects.pod_ports import host_ports
from scheduler.objects.resources import pod_request_summary
from scheduler.objects.shapes import string_map
from scheduler.objects.taints import Toleration
from scheduler.objects.taints import parse_toleration

# Distinct specs remembered: far more than the templates of a large cluster, and small next to
# its pods (each entry is one spec's text and its parsed fields).
MEMO_SIZE: Final = 2048


# Compared by identity, as a Pod (which extends it) is: equal fields do not make two pods one.
@dataclass(frozen=True, slots=True, eq=False)
class PodSpecFields:
    """The fields a pod derives from its spec alone, parsed."""

    scheduler_name: str
    priority: int
    preemption_policy: str
    requests: Mapping[str, int]
    non_zero_cpu: int
    non_zero_memory: int
    host_ports: tuple[HostPort, ...]
    tolerations: tuple[Toleration, ...]
    node_selector: Mapping[str, str]
    node_affinity: NodeAffinity | None
    topology_spread_constraints: tuple[Mapping[str, Any], ...]
    scheduling_gates: tuple[str, ...]
    images: tuple[str, ...]


_memo: dict[bytes, PodSpecFields] = {}


def spec_fields(spec: Mapping[str, Any]) -> PodSpecFields:
    """The fields derived from `spec`, parsed now or remembered from an equal spec; raises
    what parsing raises (ValueError naming the field, or the error a bad value causes)."""
    key = _memo_key(spec)
    if key is None:
        return _parse(spec)
    known = _memo.get(key)
    if known is not None:
        return known
    parsed = _parse(spec)
    if len(_memo) >= MEMO_SIZE:
        del _memo[next(iter(_memo))]
    _memo[key] = parsed
    return parsed


def forget_specs() -> None:
    """Empty the memo (for tests that count parses)."""
    _memo.clear()


def _memo_key(spec: Mapping[str, Any]) -> bytes | None:
    """The spec's JSON text without nodeName, or None for a spec that is not plain JSON (an
    object built in memory may hold other types): such a spec is parsed every time."""
    if "nodeName" in spec:
        spec = {key: value for key, value in spec.items() if key != "nodeName"}
    try:
        return orjson.dumps(spec)
    except TypeError:
        return None


def _parse(spec: Mapping[str, Any]) -> PodSpecFields:
    shapes.pod_spec(spec)
    shapes.volumes(spec.get("volumes"))
    affinity = spec.get("affinity") or {}
    requests, cpu, memory = pod_request_summary(spec)
    return PodSpecFields(
        scheduler_name=str(spec.get("schedulerName") or "default-scheduler"),
        priority=bounded_int(spec.get("priority") or 0, 32, "spec.priority"),
        preemption_policy=str(spec.get("preemptionPolicy") or "PreemptLowerPriority"),
        requests=requests,
        non_zero_cpu=cpu,
        non_zero_memory=memory,
        host_ports=host_ports(spec),
        tolerations=tuple(parse_toleration(t) for t in spec.get("tolerations") or ()),
        node_selector=string_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        node_affinity=parse_node_affinity(affinity.get("nodeAffinity")),
        topology_spread_constraints=shapes.spread_constraints(
            spec.get("topologySpreadConstraints")
        ),
        scheduling_gates=tuple(str(g.get("name", "")) for g in spec.get("schedulingGates") or ()),
        images=_images(spec),
    )


def _images(spec: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(
        str(c["image"])
        for c in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
        if c.get("image")
    )
