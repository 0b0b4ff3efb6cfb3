"""A pod as the scheduler sees it: parsed once from the API's dict, then read-only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from scheduler.objects import shapes
from scheduler.objects.errors import read_object
from scheduler.objects.integers import bounded_int
from scheduler.objects.node_selector import NodeAffinity
from scheduler.objects.node_selector import parse_node_affinity
from scheduler.objects.pod_affinity import PodAffinity
from scheduler.objects.pod_affinity import parse_pod_affinity
from scheduler.objects.resources import pod_request_summary
from scheduler.objects.shapes import object_list
from scheduler.objects.shapes import string_map
from scheduler.objects.taints import Toleration
from scheduler.objects.taints import parse_toleration


@dataclass(frozen=True, slots=True)
class HostPort:
    """A (hostIP, protocol, hostPort) a container asks the node for."""

    host_ip: str
    protocol: str
    port: int

    def conflicts(self, other: HostPort) -> bool:
        if self.port != other.port or self.protocol != other.protocol:
            return False
        wildcard = ("", "0.0.0.0")
        return (
            self.host_ip in wildcard or other.host_ip in wildcard or (self.host_ip == other.host_ip)
        )


def _host_ports(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    ports: list[HostPort] = []
    containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
    for container in containers:
        for port in container.get("ports") or ():
            host_port = bounded_int(port.get("hostPort") or 0, 32, "hostPort")
            if host_port <= 0:
                continue
            ip = str(port.get("hostIP") or "0.0.0.0")
            ports.append(HostPort(ip, str(port.get("protocol") or "TCP"), host_port))
    return tuple(ports)


def _describe(raw: Mapping[str, Any]) -> str:
    meta = raw.get("metadata") if isinstance(raw, Mapping) else None
    if not isinstance(meta, Mapping):
        return "<no metadata>"
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '?')}"


def _images(spec: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(
        str(c["image"])
        for c in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
        if c.get("image")
    )


@dataclass(frozen=True, slots=True, eq=False)
class Pod:
    """Read-only view of a v1.Pod with everything the scheduler derives from it precomputed."""

    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    scheduler_name: str
    node_name: str
    priority: int
    preemption_policy: str
    requests: Mapping[str, int]
    non_zero_cpu: int
    non_zero_memory: int
    host_ports: tuple[HostPort, ...]
    tolerations: tuple[Toleration, ...]
    node_selector: Mapping[str, str]
    node_affinity: NodeAffinity | None
    pod_affinity: PodAffinity | None
    pod_anti_affinity: PodAffinity | None
    topology_spread_constraints: tuple[Mapping[str, Any], ...]
    scheduling_gates: tuple[str, ...]
    images: tuple[str, ...]
    nominated_node_name: str
    phase: str
    deleting: bool
    generation: int
    resource_version: str
    creation_timestamp: str
    raw: Mapping[str, Any] = field(repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def has_required_anti_affinity(self) -> bool:
        return self.pod_anti_affinity is not None and bool(self.pod_anti_affinity.required)

    @property
    def has_affinity_terms(self) -> bool:
        return self.pod_affinity is not None or self.pod_anti_affinity is not None

    @property
    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Pod:
        """Parse a v1.Pod; InvalidObjectError names the pod and the field it cannot read."""
        return read_object("Pod", raw, cls._parse, _describe)

    @classmethod
    def _parse(cls, raw: Mapping[str, Any]) -> Pod:
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        shapes.pod_spec(spec)
        namespace = str(meta.get("namespace") or "default")
        labels = string_map(meta.get("labels"), "metadata.labels")
        shapes.volumes(spec.get("volumes"))
        shapes.pod_status(raw.get("status"))
        object_list(meta.get("ownerReferences"), "metadata.ownerReferences")
        affinity = spec.get("affinity") or {}
        requests, cpu, memory = pod_request_summary(spec)
        return cls(
            namespace=namespace,
            name=str(meta.get("name", "")),
            uid=str(meta.get("uid", "")),
            labels=labels,
            annotations=string_map(meta.get("annotations"), "metadata.annotations"),
            scheduler_name=str(spec.get("schedulerName") or "default-scheduler"),
            node_name=str(spec.get("nodeName") or ""),
            priority=bounded_int(spec.get("priority") or 0, 32, "spec.priority"),
            preemption_policy=str(spec.get("preemptionPolicy") or "PreemptLowerPriority"),
            requests=requests,
            non_zero_cpu=cpu,
            non_zero_memory=memory,
            host_ports=_host_ports(spec),
            tolerations=tuple(parse_toleration(t) for t in spec.get("tolerations") or ()),
            node_selector=string_map(spec.get("nodeSelector"), "spec.nodeSelector"),
            node_affinity=parse_node_affinity(affinity.get("nodeAffinity")),
            pod_affinity=parse_pod_affinity(affinity.get("podAffinity"), namespace, labels),
            pod_anti_affinity=parse_pod_affinity(
                affinity.get("podAntiAffinity"), namespace, labels
            ),
            topology_spread_constraints=shapes.spread_constraints(
                spec.get("topologySpreadConstraints")
            ),
            scheduling_gates=tuple(
                str(g.get("name", "")) for g in spec.get("schedulingGates") or ()
            ),
            images=_images(spec),
            nominated_node_name=str(status.get("nominatedNodeName") or ""),
            phase=str(status.get("phase") or "Pending"),
            deleting=bool(meta.get("deletionTimestamp")),
            generation=bounded_int(meta.get("generation") or 0, 64, "metadata.generation"),
            resource_version=str(meta.get("resourceVersion") or ""),
            creation_timestamp=str(meta.get("creationTimestamp") or ""),
            raw=raw,
        )
