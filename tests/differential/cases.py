"""Seeded random scheduling cases for the differential suite: a few nodes, pods already bound
to them, and one pending pod whose constraints exercise the default plugins.

A case is plain API objects (dicts), so it can be saved to a file and replayed as it is. Names
are local to the case; the runner gives each scheduler's run its own namespace and node names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
ZONES = ("zone-a", "zone-b", "zone-c")
DISKS = ("ssd", "hdd")
APPS = ("web", "db", "cache")
IMAGES = (
    ("registry.example/web:1.0", 600 * 1024 * 1024),
    ("registry.example/db:2.1", 300 * 1024 * 1024),
    ("registry.example/tools@sha256:" + "ab" * 32, 900 * 1024 * 1024),
)
TAINT_KEY = "dedicated"

Object = dict[str, Any]


@dataclass
class Case:
    """Nodes, bound pods and the pending pod, all without namespace or scheduler name."""

    nodes: list[Object]
    bound: list[Object]
    pending: Object
    extra: list[Object] = field(default_factory=list)

    def to_json(self) -> Object:
        return {"nodes": self.nodes, "bound": self.bound, "pending": self.pending}

    @classmethod
    def from_json(cls, data: Object) -> Case:
        return cls(nodes=data["nodes"], bound=data["bound"], pending=data["pending"])


def _node(rng: random.Random, name: str) -> Object:
    cpu = rng.choice(("1", "2", "4"))
    capacity = {"cpu": cpu, "memory": rng.choice(("2Gi", "4Gi", "8Gi")), "pods": "10"}
    labels = {HOSTNAME: name, ZONE: rng.choice(ZONES), "disk": rng.choice(DISKS)}
    spec: Object = {}
    if rng.random() < 0.2:
        spec["taints"] = [{"key": TAINT_KEY, "value": "batch", "effect": "NoSchedule"}]
    if rng.random() < 0.1:
        spec["unschedulable"] = True
    images = [
        {"names": [image], "sizeBytes": size + rng.choice((0, 50 * 1024 * 1024))}
        for image, size in IMAGES
        if rng.random() < 0.4
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "images": images,
        },
    }


def _container(rng: random.Random, *, cpu: int, memory_mi: int, port: int | None) -> Object:
    container: Object = {
        "name": "main",
        "image": rng.choice([image for image, _ in IMAGES] + ["registry.example/other"]),
        "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{memory_mi}Mi"}},
    }
    if port is not None:
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    return container


def _pod(name: str, labels: dict[str, str], priority: int, container: Object) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"priority": priority, "containers": [container]},
    }


def _bound_pod(rng: random.Random, index: int, node: str) -> Object:
    port = 8080 if rng.random() < 0.2 else None
    container = _container(
        rng, cpu=rng.choice((100, 250, 500, 1000)), memory_mi=rng.choice((128, 512)), port=port
    )
    pod = _pod(f"bound-{index}", {"app": rng.choice(APPS)}, rng.choice((0, 5, 10)), container)
    pod["spec"]["nodeName"] = node
    return pod


def _node_affinity(rng: random.Random, node_names: list[str]) -> Object:
    kind = rng.choice(("zone", "names", "missing-name", "names-and-disk"))
    terms: list[Object]
    if kind == "zone":
        zones = rng.sample(ZONES, rng.randint(1, 2))
        terms = [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": zones}]}]
    else:
        names = rng.sample(node_names, rng.randint(1, len(node_names)))
        if kind == "missing-name":
            names = ["deleted-node"]
        # The API allows one name per field requirement; terms are ORed.
        terms = [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
            for name in names
        ]
        if kind == "names-and-disk":
            for term in terms:
                term["matchExpressions"] = [{"key": "disk", "operator": "In", "values": ["ssd"]}]
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}


def _pod_affinity(rng: random.Random) -> Object:
    term = {
        "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
        "topologyKey": rng.choice((HOSTNAME, ZONE)),
    }
    if rng.random() < 0.5:
        return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    if rng.random() < 0.5:
        return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    weighted = {"weight": rng.randint(1, 100), "podAffinityTerm": term}
    return {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [weighted]}}


def _pending_pod(rng: random.Random, node_names: list[str]) -> Object:
    port = 8080 if rng.random() < 0.2 else None
    container = _container(
        rng,
        cpu=rng.choice((100, 500, 1000, 1500, 3000)),
        memory_mi=rng.choice((128, 1024, 3072)),
        port=port,
    )
    app = rng.choice(APPS)
    priority = rng.choice((0, 0, 100))
    pod = _pod("pending", {"app": app}, priority, container)
    spec = pod["spec"]
    affinity: Object = {}
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"disk": rng.choice(DISKS)}
    if rng.random() < 0.3:
        affinity["nodeAffinity"] = _node_affinity(rng, node_names)
    if rng.random() < 0.3:
        affinity.update(_pod_affinity(rng))
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]
    if rng.random() < 0.25:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    if rng.random() < 0.08:
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "missing"}}]
    if rng.random() < 0.1:
        spec["preemptionPolicy"] = "Never"
    return pod


def generate(seed: int, index: int) -> Case:
    """Case `index` of the run seeded `seed`: the same two numbers give the same case."""
    rng = random.Random(f"{seed}/{index}")
    node_names = [f"n{i}" for i in range(rng.randint(1, 5))]
    nodes = [_node(rng, name) for name in node_names]
    bound = [
        _bound_pod(rng, i, rng.choice(node_names)) for i in range(rng.randint(0, 2 * len(nodes)))
    ]
    return Case(nodes=nodes, bound=bound, pending=_pending_pod(rng, node_names))
