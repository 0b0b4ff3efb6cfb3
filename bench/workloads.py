"""Workloads in the shape of upstream's scheduler_perf test cases, as Kubernetes objects."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from scheduler.app.dra_scenario import GPU_DRIVER
from scheduler.app.dra_scenario import claim_gpus
from scheduler.app.dra_scenario import gpu_device_class
from scheduler.app.dra_scenario import gpu_slices
from scheduler.app.scenario import generate_nodes
from scheduler.app.scenario import generate_pods
from scheduler.app.scenario import parse_shape
from scheduler.testing.dra_builders import consuming
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_counter_slice
from scheduler.testing.dra_builders import make_slice

NODE_SHAPE = "cpu=4,memory=32Gi,pods=110"
POD_SHAPE = "cpu=100m,memory=500Mi"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
EXTENDED_GPU = "example.com/gpu"

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


def partitioned_slices(node: str, gpus: int) -> Objects:
    """A node's GPUs as partitionable devices: each 40Gi GPU published as four 10Gi quarters
    and whole, all drawing on its memory counter (quarters first, so first fit takes them)."""
    sets = {f"gpu-{i}": {"memory": "40Gi"} for i in range(gpus)}
    counters = make_counter_slice(f"{node}-counters", GPU_DRIVER, node, sets, node=node)
    devices = []
    for i in range(gpus):
        for quarter in range(4):
            part = device(f"gpu-{i}-q{quarter}", model="sim-gpu", index=i)
            devices.append(consuming(part, f"gpu-{i}", memory="10Gi"))
        devices.append(
            consuming(device(f"gpu-{i}", model="sim-gpu", index=i), f"gpu-{i}", memory="40Gi")
        )
    return [counters, make_slice(f"{node}-gpus", GPU_DRIVER, devices, node=node, slice_count=2)]


def partitioned_devices(nodes: int, pods: int) -> Objects:
    """SchedulingWithPartitionedDevices: SchedulingWithResourceClaims with each node's 8 GPU
    slots as two partitionable GPUs of four quarters each, every device drawing on counters."""
    node_objects = generate_nodes(nodes, parse_shape(NODE_SHAPE, "node"), 0)
    pod_objects = generate_pods(pods, parse_shape(POD_SHAPE, "pod"), "default-scheduler")
    templates = claim_gpus(pod_objects, 1)
    slices = [s for n in node_objects for s in partitioned_slices(n["metadata"]["name"], 2)]
    return [*node_objects, gpu_device_class(), *slices, *templates, *pod_objects]


def extended_resources(nodes: int, pods: int) -> Objects:
    """SchedulingWithExtendedResources: SchedulingWithResourceClaims with the pods asking for
    `example.com/gpu: 1` in their container instead of a claim; the DeviceClass provides that
    resource, so the scheduler makes each pod's claim itself (and creates it at PreBind)."""
    node_objects = generate_nodes(nodes, parse_shape(NODE_SHAPE, "node"), 0)
    pod_objects = generate_pods(pods, parse_shape(POD_SHAPE, "pod"), "default-scheduler")
    for pod in pod_objects:
        resources = pod["spec"]["containers"][0].setdefault("resources", {})
        resources.setdefault("requests", {})[EXTENDED_GPU] = "1"
        resources.setdefault("limits", {})[EXTENDED_GPU] = "1"
    slices = gpu_slices(node_objects, 8)
    slices[0]["spec"]["extendedResourceName"] = EXTENDED_GPU  # the DeviceClass comes first
    return [*node_objects, *slices, *pod_objects]


def one_pod_per_node(nodes: int, pods: int) -> Objects:
    """SchedulingOnePodPerNode: pods requesting 3 of a node's 4 CPUs, so each fills the node it
    gets (large jobs, daemons of a kind, whole-node GPU workloads)."""
    objects = generate_nodes(nodes, parse_shape(NODE_SHAPE, "node"), 0)
    shape = parse_shape("cpu=3,memory=1Gi", "pod")
    return objects + generate_pods(pods, shape, "default-scheduler")


WORKLOADS: dict[str, Callable[[int, int], Objects]] = {
    "SchedulingBasic": scheduling_basic,
    "SchedulingOnePodPerNode": one_pod_per_node,
    "TopologySpreading": topology_spreading,
    "SchedulingPodAntiAffinity": pod_anti_affinity,
    "SchedulingWithResourceClaims": resource_claims,
    "SchedulingWithPartitionedDevices": partitioned_devices,
    "SchedulingWithExtendedResources": extended_resources,
}
