"""Richer inter-pod and spreading shapes for a generated case: label-selector expressions,
matchLabelKeys and mismatchLabelKeys, preferred anti-affinity, terms carried by bound pods (which
the pending pod must respect, and which score it), two spreading constraints at once, the node
inclusion policies, numeric node-label comparisons and host ports on a host IP.

Drawn from a random stream of their own, so that adding them left every earlier draw of a case
as it was: a seed names the same nodes, pods and devices as before, only with more terms.
"""

from __future__ import annotations

import random
from typing import Any

Object = dict[str, Any]

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
APPS = ("web", "db", "cache")
TRACKS = ("stable", "canary")
# A node label holding a number, for Gt and Lt.
GENERATION = "example.com/generation"


def with_affinity_shapes(
    seed: int, index: int, nodes: list[Object], bound: list[Object], pending: Object
) -> None:
    """Adds shapes to the case's objects in place."""
    rng = random.Random(f"{seed}/{index}/affinity-shapes")
    for node in nodes:
        if rng.random() < 0.5:
            node["metadata"]["labels"][GENERATION] = str(rng.randint(1, 5))
    for pod in [*bound, pending]:
        if rng.random() < 0.7:
            pod["metadata"]["labels"]["track"] = rng.choice(TRACKS)
    for pod in bound:
        _maybe_bound_terms(rng, pod)
    _maybe_pending_terms(rng, pending)


def _selector(rng: random.Random) -> Object:
    """A label selector over `app` (and sometimes `track`), in one of its spellings."""
    kind = rng.choice(("labels", "in", "not-in", "exists", "does-not-exist"))
    if kind == "labels":
        return {"matchLabels": {"app": rng.choice(APPS)}}
    if kind == "in":
        values = rng.sample(APPS, rng.randint(1, 2))
        return {"matchExpressions": [{"key": "app", "operator": "In", "values": values}]}
    if kind == "not-in":
        values = [rng.choice(APPS)]
        return {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": values}]}
    if kind == "exists":
        return {"matchExpressions": [{"key": "track", "operator": "Exists"}]}
    return {
        "matchLabels": {"app": rng.choice(APPS)},
        "matchExpressions": [{"key": "track", "operator": "DoesNotExist"}],
    }


def _term(rng: random.Random, pod: Object) -> Object:
    term: Object = {"labelSelector": _selector(rng), "topologyKey": rng.choice((HOSTNAME, ZONE))}
    # The apiserver folds these keys into the selector with the pod's own values; a key the
    # pod lacks is dropped. Both schedulers read the stored result.
    if _may_add_track_key(pod, term["labelSelector"]) and rng.random() < 0.3:
        term[rng.choice(("matchLabelKeys", "mismatchLabelKeys"))] = ["track"]
    return term


def _may_add_track_key(pod: Object, selector: Object) -> bool:
    """The API refuses a key in both matchLabelKeys and the selector; one the pod lacks adds
    nothing."""
    in_selector = set(selector.get("matchLabels", {})) | {
        requirement["key"] for requirement in selector.get("matchExpressions", [])
    }
    return "track" in pod["metadata"]["labels"] and "track" not in in_selector


def _maybe_bound_terms(rng: random.Random, pod: Object) -> None:
    affinity = pod["spec"].setdefault("affinity", {})
    roll = rng.random()
    if roll < 0.08:
        affinity.setdefault("podAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = [
            _term(rng, pod)
        ]
    elif roll < 0.2:
        kind = rng.choice(("podAffinity", "podAntiAffinity"))
        weighted = {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng, pod)}
        affinity.setdefault(kind, {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
            weighted
        ]
    if not affinity:
        del pod["spec"]["affinity"]


def _maybe_pending_terms(rng: random.Random, pod: Object) -> None:
    spec = pod["spec"]
    if rng.random() < 0.2:
        affinity = spec.setdefault("affinity", {})
        weighted = [
            {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng, pod)}
            for _ in range(rng.randint(1, 2))
        ]
        affinity.setdefault("podAntiAffinity", {})[
            "preferredDuringSchedulingIgnoredDuringExecution"
        ] = weighted
    if rng.random() < 0.1:
        affinity = spec.setdefault("affinity", {})
        anti = affinity.setdefault("podAntiAffinity", {})
        required = anti.setdefault("requiredDuringSchedulingIgnoredDuringExecution", [])
        required.append(_term(rng, pod))
    constraints = spec.get("topologySpreadConstraints")
    if constraints and rng.random() < 0.5:
        _vary_spreading(rng, pod, constraints)
    if rng.random() < 0.15:
        _numeric_node_requirement(rng, spec)
    if rng.random() < 0.1:
        _host_port_on_ip(rng, spec)


def _vary_spreading(rng: random.Random, pod: Object, constraints: list[Object]) -> None:
    first = constraints[0]
    if rng.random() < 0.4:
        first["labelSelector"] = _selector(rng)
    if _may_add_track_key(pod, first["labelSelector"]) and rng.random() < 0.3:
        first["matchLabelKeys"] = ["track"]
    if rng.random() < 0.3:
        first["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
    if rng.random() < 0.4:
        other_key = HOSTNAME if first["topologyKey"] == ZONE else ZONE
        second: Object = {
            "maxSkew": rng.choice((1, 2)),
            "topologyKey": other_key,
            "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
            "labelSelector": _selector(rng),
        }
        constraints.append(second)


def _numeric_node_requirement(rng: random.Random, spec: Object) -> None:
    operator = rng.choice(("Gt", "Lt"))
    requirement = {"key": GENERATION, "operator": operator, "values": [str(rng.randint(1, 5))]}
    node_affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    required = node_affinity.setdefault(
        "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [{}]}
    )
    for term in required["nodeSelectorTerms"]:
        term.setdefault("matchExpressions", []).append(requirement)


def _host_port_on_ip(rng: random.Random, spec: Object) -> None:
    """A host port bound to one address, sometimes UDP: it collides with a bound pod's 8080 only
    where address and protocol overlap."""
    container = spec["containers"][0]
    container["ports"] = [
        {
            "containerPort": 8080,
            "hostPort": 8080,
            "hostIP": rng.choice(("127.0.0.1", "0.0.0.0")),
            "protocol": rng.choice(("TCP", "UDP")),
        }
    ]
