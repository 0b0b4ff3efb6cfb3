"""Seeded random scheduling cases for the differential suite: a few nodes, pods already bound
to them, and one pending pod whose constraints exercise the default plugins.

A case is plain API objects (dicts), so it can be saved to a file and replayed as it is. Names
are local to the case; the runner gives each scheduler's run its own namespace and node names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from tests.differential.affinity_shapes import with_affinity_shapes
from tests.differential.devices import with_devices

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
GPU = "example.com/gpu"

Object = dict[str, Any]


WFFC_CLASS = "differential-wait-for-consumer"
CLAIM = "data"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"


@dataclass
class Case:
    """Volumes (PersistentVolumes and claims), devices (a DeviceClass, ResourceSlices and
    ResourceClaims), nodes, bound pods and the pending pod, all without namespace or scheduler
    name."""

    nodes: list[Object]
    bound: list[Object]
    pending: Object
    volumes: list[Object] = field(default_factory=list)
    devices: list[Object] = field(default_factory=list)

    def to_json(self) -> Object:
        return {
            "volumes": self.volumes,
            "devices": self.devices,
            "nodes": self.nodes,
            "bound": self.bound,
            "pending": self.pending,
        }

    @classmethod
    def from_json(cls, data: Object) -> Case:
        return cls(
            nodes=data["nodes"],
            bound=data["bound"],
            pending=data["pending"],
            volumes=data.get("volumes") or [],
            devices=data.get("devices") or [],
        )


def storage_class() -> Object:
    """The one StorageClass cases use: volumes bound when a pod needs them, never provisioned."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": WFFC_CLASS},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def _node(rng: random.Random, name: str) -> Object:
    cpu = rng.choice(("1", "2", "4"))
    capacity = {
        "cpu": cpu,
        "memory": rng.choice(("2Gi", "4Gi", "8Gi")),
        "pods": rng.choice(("3", "10", "10")),
        "ephemeral-storage": rng.choice(("10Gi", "50Gi")),
    }
    if rng.random() < 0.3:
        capacity[GPU] = rng.choice(("1", "2"))
    labels = {HOSTNAME: name, ZONE: rng.choice(ZONES), "disk": rng.choice(DISKS)}
    spec: Object = {}
    if rng.random() < 0.2:
        spec["taints"] = [{"key": TAINT_KEY, "value": "batch", "effect": "NoSchedule"}]
    elif rng.random() < 0.2:
        spec["taints"] = [{"key": TAINT_KEY, "value": "batch", "effect": "PreferNoSchedule"}]
    elif rng.random() < 0.1:
        spec["taints"] = [{"key": "maintenance", "effect": "NoExecute"}]
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
    if rng.random() < 0.15:
        term = {
            "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
            "topologyKey": rng.choice((HOSTNAME, ZONE)),
        }
        pod["spec"]["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    if rng.random() < 0.15:
        container["resources"]["requests"][GPU] = "1"
        container["resources"]["limits"] = {GPU: "1"}
    _maybe_init_containers(rng, pod)
    return pod


def _maybe_init_containers(rng: random.Random, pod: Object) -> None:
    """An init container and sometimes a sidecar (restartPolicy Always), each with requests."""
    if rng.random() >= 0.15:
        return
    init: list[Object] = [
        {
            "name": "init",
            "image": "registry.example/init",
            "resources": {"requests": {"cpu": f"{rng.choice((200, 2000))}m"}},
        }
    ]
    if rng.random() < 0.5:
        init.append(
            {
                "name": "sidecar",
                "image": "registry.example/sidecar",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "300m", "memory": "64Mi"}},
            }
        )
    pod["spec"]["initContainers"] = init


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
    elif rng.random() < 0.1:
        spec["tolerations"] = [{"key": "maintenance", "operator": "Exists"}]
    if rng.random() < 0.15:
        container["resources"]["requests"][GPU] = "1"
        container["resources"]["limits"] = {GPU: "1"}
    if rng.random() < 0.1:
        container["resources"]["requests"]["ephemeral-storage"] = rng.choice(("5Gi", "20Gi"))
    _maybe_init_containers(rng, pod)
    if rng.random() < 0.25:
        constraint: Object = {
            "maxSkew": rng.choice((1, 1, 2)),
            "topologyKey": rng.choice((ZONE, ZONE, HOSTNAME)),
            "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
            "labelSelector": {"matchLabels": {"app": app}},
        }
        if constraint["whenUnsatisfiable"] == "DoNotSchedule" and rng.random() < 0.3:
            constraint["minDomains"] = rng.choice((2, 3))
        if rng.random() < 0.2:
            constraint["nodeTaintsPolicy"] = "Honor"
        spec["topologySpreadConstraints"] = [constraint]
    if rng.random() < 0.2:
        zone = rng.choice(ZONES)
        preference = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
        spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})[
            "preferredDuringSchedulingIgnoredDuringExecution"
        ] = [{"weight": rng.randint(1, 100), "preference": preference}]
    if rng.random() < 0.15:
        reference = rng.choice([image for image, _ in IMAGES])
        spec["volumes"] = [{"name": "image", "image": {"reference": reference}}]
    if rng.random() < 0.15 and not spec.get("initContainers"):
        # Pod-level requests at least the containers' sum, as the API requires.
        requests = container["resources"]["requests"]
        cpu = int(requests["cpu"].removesuffix("m")) + rng.choice((0, 500, 1000))
        memory = int(requests["memory"].removesuffix("Mi")) + rng.choice((0, 512))
        spec["resources"] = {"requests": {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}}
    if rng.random() < 0.1:
        spec["preemptionPolicy"] = "Never"
    return pod


def _persistent_volume(
    name: str, *, node: str | None, access: str = "ReadWriteOnce", storage_class: str = ""
) -> Object:
    spec: Object = {
        "capacity": {"storage": "1Gi"},
        "accessModes": [access],
        "hostPath": {"path": f"/tmp/{name}"},
        "storageClassName": storage_class,
    }
    if node is not None:
        term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": spec,
    }


def _claim(*, volume: str = "", access: str = "ReadWriteOnce", storage_class: str = "") -> Object:
    metadata: Object = {"name": CLAIM}
    spec: Object = {
        "accessModes": [access],
        "resources": {"requests": {"storage": "1Gi"}},
        "storageClassName": storage_class,
    }
    if volume:
        spec["volumeName"] = volume
        metadata["annotations"] = {BIND_COMPLETED: "yes"}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata, "spec": spec}


def _with_volumes(rng: random.Random, case: Case, node_names: list[str]) -> None:
    """Gives the pending pod a claim of one of four shapes (or none)."""
    kind = rng.choice(("none", "none", "missing", "bound-local", "read-write-once-pod", "wait"))
    if kind == "none":
        return
    pending_volumes = case.pending["spec"].setdefault("volumes", [])
    pending_volumes.append({"name": "data", "persistentVolumeClaim": {"claimName": CLAIM}})
    if kind == "missing":
        return
    if kind == "bound-local":
        # A claim bound to a volume only one node can reach.
        case.volumes += [
            _persistent_volume("pv", node=rng.choice(node_names)),
            _claim(volume="pv"),
        ]
    elif kind == "read-write-once-pod":
        # A bound pod already uses the claim: no other pod may, wherever it goes.
        case.volumes += [
            _persistent_volume("pv", node=None, access="ReadWriteOncePod"),
            _claim(volume="pv", access="ReadWriteOncePod"),
        ]
        if case.bound:
            user = rng.choice(case.bound)
            user["spec"]["volumes"] = [
                {"name": "data", "persistentVolumeClaim": {"claimName": CLAIM}}
            ]
    else:
        # Waits for its consumer, with no volume to take: every node fails to find one.
        case.volumes.append(_claim(storage_class=WFFC_CLASS))


def generate(seed: int, index: int) -> Case:
    """Case `index` of the run seeded `seed`: the same two numbers give the same case."""
    rng = random.Random(f"{seed}/{index}")
    node_names = [f"n{i}" for i in range(rng.randint(1, 5))]
    nodes = [_node(rng, name) for name in node_names]
    bound = [
        _bound_pod(rng, i, rng.choice(node_names)) for i in range(rng.randint(0, 3 * len(nodes)))
    ]
    # Distinct start times: kube-scheduler gives a pod without one the time of each look at it,
    # which makes its choice between otherwise equal preemption candidates a matter of chance.
    for pod, minute in zip(bound, rng.sample(range(60), len(bound)), strict=True):
        pod["status"] = {"phase": "Running", "startTime": f"2026-01-01T10:{minute:02d}:00Z"}
    case = Case(nodes=nodes, bound=bound, pending=_pending_pod(rng, node_names))
    _with_volumes(rng, case, node_names)
    case.devices = with_devices(seed, index, case.pending, node_names)
    with_affinity_shapes(seed, index, case.nodes, case.bound, case.pending)
    return case
