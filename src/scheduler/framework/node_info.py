"""NodeInfo: a node together with the pods on it and what they take."""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence

from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.objects.pod_ports import HostPort
from scheduler.objects.resources import PODS


def counted_nominations(pod: Pod, nominated: Sequence[Pod]) -> list[Pod]:
    """The pods nominated to a node that Filter counts as already there when it tries `pod`:
    those of at least its priority, other than the pod itself (upstream's rule)."""
    return [p for p in nominated if p.priority >= pod.priority and p.uid != pod.uid]


class NodePods:
    """The pods on a node by key, iterated in the order upstream's NodeInfo keeps them.

    Upstream holds them in a slice: a pod added goes to the end, and a pod removed leaves its
    slot to the last pod. That order is observable: preemption lists a node's potential victims
    in it, and the sort that orders them leaves equal pods in an order that depends on it. A
    list with each key's index keeps the same order at O(1) per add, remove and lookup.
    """

    __slots__ = ("_index", "_pods")

    def __init__(self) -> None:
        self._pods: list[Pod] = []
        self._index: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"NodePods({self.keys()!r})"

    def get(self, key: str) -> Pod | None:
        index = self._index.get(key)
        return None if index is None else self._pods[index]

    def __getitem__(self, key: str) -> Pod:
        return self._pods[self._index[key]]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def values(self) -> Sequence[Pod]:
        """The pods, in order; a live view (copy it before changing the node under it)."""
        return self._pods

    def keys(self) -> list[str]:
        return [pod.key for pod in self._pods]

    def __iter__(self) -> Iterator[str]:
        return (pod.key for pod in self._pods)

    def __len__(self) -> int:
        return len(self._pods)

    def append(self, pod: Pod) -> None:
        """Add a pod whose key is not here yet, at the end."""
        self._index[pod.key] = len(self._pods)
        self._pods.append(pod)

    def pop(self, key: str) -> Pod | None:
        """Remove the pod with `key` (None if there is none); the last pod takes its slot."""
        index = self._index.pop(key, None)
        if index is None:
            return None
        pods = self._pods
        removed = pods[index]
        last = pods.pop()
        if index < len(pods):
            pods[index] = last
            self._index[last.key] = index
        return removed

    def copy(self) -> NodePods:
        """An independent copy, in the same order."""
        copy = NodePods()
        copy._pods.extend(self._pods)
        copy._index.update(self._index)
        return copy


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
        self.pods = NodePods()
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
        """Add `pod` at the end; one with the same key is removed first, as upstream's cache
        updates a pod (so an updated pod moves to the end)."""
        if pod.key in self.pods:
            self.remove_pod(pod.key)
        self.pods.append(pod)
        self._account(pod, 1)

    def replace_pod(self, pod: Pod) -> None:
        """Swap in a new version of a pod held here that takes the same room (its requests,
        ports and terms unchanged), without recounting what it takes; the pod's place and the
        generation change as removing and adding it would."""
        self.pods.pop(pod.key)
        self.pods.append(pod)
        self.generation += 2

    def remove_pod(self, key: str) -> Pod | None:
        pod = self.pods.pop(key)
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
        copy.pods = self.pods.copy()
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
