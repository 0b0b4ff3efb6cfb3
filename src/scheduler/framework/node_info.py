"""NodeInfo: a node together with the pods on it and what they take."""

from __future__ import annotations

from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.objects.pod_ports import HostPort
from scheduler.objects.resources import PODS


class NodeInfo:
    """Aggregated state of one node. Owned by the cache; plugins read it, never write it.

    `node` is None while the cache has pods bound to a node it has not seen (or no longer sees).
    """

    __slots__ = (
        "generation",
        "node",
        "non_zero_cpu",
        "non_zero_memory",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None) -> None:
        self.node = node
        self.pods: dict[str, Pod] = {}
        self.requested: dict[str, int] = {}
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        self.used_ports: list[HostPort] = []
        self.pods_with_affinity = 0
        self.pods_with_required_anti_affinity = 0
        self.generation = 0

    @property
    def name(self) -> str:
        return self.node.name if self.node is not None else ""

    @property
    def allocatable(self) -> dict[str, int]:
        return dict(self.node.allocatable) if self.node is not None else {}

    @property
    def allowed_pods(self) -> int:
        return self.node.allocatable.get(PODS, 0) if self.node is not None else 0

    def add_pod(self, pod: Pod) -> None:
        if pod.key in self.pods:
            self.remove_pod(pod.key)
        self.pods[pod.key] = pod
        self._account(pod, 1)

    def replace_pod(self, pod: Pod) -> None:
        """Swap in a new version of a pod held here that takes the same room (its requests,
        ports and terms unchanged); counts a change as removing and adding it would."""
        self.pods[pod.key] = pod
        self.generation += 2

    def remove_pod(self, key: str) -> Pod | None:
        pod = self.pods.pop(key, None)
        if pod is not None:
            self._account(pod, -1)
        return pod

    def _account(self, pod: Pod, sign: int) -> None:
        for name, value in pod.requests.items():
            self.requested[name] = self.requested.get(name, 0) + sign * value
        self.non_zero_cpu += sign * pod.non_zero_cpu
        self.non_zero_memory += sign * pod.non_zero_memory
        if sign > 0:
            self.used_ports.extend(pod.host_ports)
        else:
            for port in pod.host_ports:
                self.used_ports.remove(port)
        if pod.has_affinity_terms:
            self.pods_with_affinity += sign
        if pod.has_required_anti_affinity:
            self.pods_with_required_anti_affinity += sign
        self.generation += 1

    def clone(self) -> NodeInfo:
        copy = NodeInfo(self.node)
        copy.pods = dict(self.pods)
        copy.requested = dict(self.requested)
        copy.non_zero_cpu = self.non_zero_cpu
        copy.non_zero_memory = self.non_zero_memory
        copy.used_ports = list(self.used_ports)
        copy.pods_with_affinity = self.pods_with_affinity
        copy.pods_with_required_anti_affinity = self.pods_with_required_anti_affinity
        copy.generation = self.generation
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)})"
