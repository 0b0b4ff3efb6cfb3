"""Workloads in the shape of upstream's scheduler_perf test cases, as Kubernetes objects."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from scheduler.app.dra_scenario import claim_gpus
from scheduler.app.dra_scenario import gpu_slices
from scheduler.app.scenario import generate_nodes
from scheduler.app.scenario import generate_pods
from scheduler.app.scenario import parse_shape

NODE_SHAPE = "cpu=4,memory=32Gi,pods=110"
POD_SHAPE = "cpu=100m,memory=500Mi"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

Objects = list[dict[str, Any]]


def _pods(count: int, labels: dict[str, str], extra_spec: dict[str, Any]) -> Objects:
    pods = generate_pods(count, parse_shape(POD_SHAPE, "pod"), "default-scheduler")
    for pod in pods:
        pod["metadata"]["labels"] = dict(labels)
        pod["spec"].update(copy.deepcopy(extra_spec))
    return pods


def scheduling_basic(nodes: int, pods: int) -> Objects:
    """SchedulingBasic: plain pods requesting 100m CPU and 500Mi."""
    objects = generate_nodes(nodes, parse_shape(NODE_SHAPE, "node"), 0)
    return objects + generate_pods(pods, parse_shape(POD_SHAPE, "pod"), "default-scheduler")


def topology_spreading(nodes: int, pods: int) -> Objects:
    """TopologySpreading: nodes in 3 zones, pods of one app spread over zones with maxSkew 1."""
    objects = generate_nodes(nodes, parse_shape(NODE_SHAPE, "node"), 3)
    constraint = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    return objects + _pods(pods, {"color": "blue"}, {"topologySpreadConstraints": [constraint]})


def pod_anti_affinity(nodes: int, pods: int) -> Objects:
    """SchedulingPodAntiAffinity: every pod repels the others from its node (hostname)."""
    objects = generate_nodes(nodes, parse_shape(NODE_SHAPE, "node"), 0)
    term = {"labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": HOSTNAME}
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return objects + _pods(pods, {"color": "green"}, {"affinity": affinity})


def resource_claims(nodes: int, pods: int) -> Objects:
    """SchedulingWithResourceClaims: 8 GPUs per node in ResourceSlices; each pod claims one
    through a ResourceClaimTemplate (claims made by the in-memory claim controller)."""
    node_objects = generate_nodes(nodes, parse_shape(NODE_SHAPE, "node"), 0)
    pod_objects = generate_pods(pods, parse_shape(POD_SHAPE, "pod"), "default-scheduler")
    templates = claim_gpus(pod_objects, 1)
    return node_objects + gpu_slices(node_objects, 8) + templates + pod_objects


WORKLOADS: dict[str, Callable[[int, int], Objects]] = {
    "SchedulingBasic": scheduling_basic,
    "TopologySpreading": topology_spreading,
    "SchedulingPodAntiAffinity": pod_anti_affinity,
    "SchedulingWithResourceClaims": resource_claims,
}
