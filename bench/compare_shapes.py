"""The workloads of the side-by-side benchmark, in the shapes of scheduler_perf's test cases.

Every shape has nodes of 4 CPU / 32Gi / 110 pods with their status set at creation (there are
no kubelets), some setup pods that are already bound when the scheduler starts (scheduler_perf's
init pods, which it schedules before measuring; here they are placed round-robin so that only
the measured pods are timed), and the measured pods, all one pause container requesting and
limited to 100m CPU / 500Mi:

- SchedulingBasic: plain pods, no setup pods.
- TopologySpreading: nodes spread over three zones; as many plain setup pods as nodes; measured
  pods labelled color=blue that must spread over the zones with maxSkew 5 (DoNotSchedule).
- SchedulingPodAntiAffinity: a fifth of the nodes hold one setup pod each; setup and measured
  pods are labelled color=green and repel every green pod, in either namespace, from their node
  (required anti-affinity on kubernetes.io/hostname). At most one green pod fits a node, so the
  measured pods are capped at the nodes left free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NAMESPACE = "sched-bench"
SETUP_NAMESPACE = "sched-bench-setup"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
ZONES = ("moon-1", "moon-2", "moon-3")
SPREAD_MAX_SKEW = 5
# scheduler_perf's anti-affinity case starts with 1,000 bound pods on its 5,000 nodes.
ANTI_AFFINITY_SETUP_SHARE = 5

Manifest = dict[str, Any]
PodSpecExtras = Callable[[], dict[str, Any]]


def node_name(index: int) -> str:
    return f"bench-node-{index:05d}"


def node_manifest(index: int, zone: str | None = None) -> Manifest:
    name = node_name(index)
    labels = {HOSTNAME: name}
    if zone is not None:
        labels[ZONE] = zone
    capacity = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "phase": "Running",
        },
    }


def pod_manifest(
    name: str,
    namespace: str,
    scheduler_name: str,
    *,
    labels: dict[str, str] | None = None,
    extra_spec: dict[str, Any] | None = None,
    node_name: str | None = None,
) -> Manifest:
    """scheduler_perf's pod-default, plus labels and spec fields; bound when `node_name`."""
    resources = {"cpu": "100m", "memory": "500Mi"}
    spec: dict[str, Any] = {
        "schedulerName": scheduler_name,
        "containers": [
            {
                "name": "pause",
                "image": PAUSE_IMAGE,
                "ports": [{"containerPort": 80}],
                "resources": {"requests": dict(resources), "limits": dict(resources)},
            }
        ],
        **(extra_spec or {}),
    }
    if node_name is not None:
        spec["nodeName"] = node_name
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def measured_pod_name(index: int) -> str:
    return f"pod-{index:06d}"


def _spread_spec() -> dict[str, Any]:
    constraint = {
        "maxSkew": SPREAD_MAX_SKEW,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    return {"topologySpreadConstraints": [constraint]}


def _anti_affinity_spec() -> dict[str, Any]:
    term = {
        "labelSelector": {"matchLabels": {"color": "green"}},
        "topologyKey": HOSTNAME,
        "namespaces": [NAMESPACE, SETUP_NAMESPACE],
    }
    required = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    return {"affinity": {"podAntiAffinity": required}}


@dataclass(frozen=True)
class WorkloadShape:
    """How one workload's nodes, setup pods and measured pods look."""

    name: str
    zoned: bool
    pod_labels: dict[str, str]
    pod_extras: PodSpecExtras | None
    # Setup pods per node (a float: 0.2 means one on every fifth node).
    setup_per_node: float
    setup_labelled: bool
    one_pod_per_node: bool

    def nodes(self, count: int) -> list[Manifest]:
        return [
            node_manifest(i, ZONES[i % len(ZONES)] if self.zoned else None) for i in range(count)
        ]

    def setup_pods(self, nodes: int, scheduler_name: str) -> list[Manifest]:
        """The pods bound before the scheduler starts, spread round-robin over the nodes."""
        count = int(nodes * self.setup_per_node)
        labels = self.pod_labels if self.setup_labelled else None
        extras = self.pod_extras() if self.setup_labelled and self.pod_extras else None
        return [
            pod_manifest(
                f"setup-{i:06d}",
                SETUP_NAMESPACE,
                scheduler_name,
                labels=labels,
                extra_spec=extras,
                node_name=node_name(i % nodes),
            )
            for i in range(count)
        ]

    def measured_pod_count(self, nodes: int, pods: int) -> int:
        """How many pods the run measures: `pods`, or fewer when the shape caps it."""
        if not self.one_pod_per_node:
            return pods
        return max(0, min(pods, nodes - int(nodes * self.setup_per_node)))

    def measured_pod(self, index: int, scheduler_name: str) -> Manifest:
        return pod_manifest(
            measured_pod_name(index),
            NAMESPACE,
            scheduler_name,
            labels=self.pod_labels,
            extra_spec=self.pod_extras() if self.pod_extras else None,
        )


BASIC = WorkloadShape(
    name="SchedulingBasic",
    zoned=False,
    pod_labels={},
    pod_extras=None,
    setup_per_node=0.0,
    setup_labelled=False,
    one_pod_per_node=False,
)
TOPOLOGY_SPREADING = WorkloadShape(
    name="TopologySpreading",
    zoned=True,
    pod_labels={"color": "blue"},
    pod_extras=_spread_spec,
    setup_per_node=1.0,
    setup_labelled=False,
    one_pod_per_node=False,
)
POD_ANTI_AFFINITY = WorkloadShape(
    name="SchedulingPodAntiAffinity",
    zoned=False,
    pod_labels={"color": "green"},
    pod_extras=_anti_affinity_spec,
    setup_per_node=1.0 / ANTI_AFFINITY_SETUP_SHARE,
    setup_labelled=True,
    one_pod_per_node=True,
)

# The names the command line takes for each shape.
SHAPES: dict[str, WorkloadShape] = {
    "basic": BASIC,
    "spreading": TOPOLOGY_SPREADING,
    "antiaffinity": POD_ANTI_AFFINITY,
}
