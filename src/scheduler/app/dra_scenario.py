"""Generated dynamic-resource inputs for `simulate`: GPUs published by ResourceSlices on the
generated nodes, a DeviceClass for them, and pods whose claims come from a template."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler.objects.raw import DEFAULT_NAMESPACE

GPU_DRIVER = "gpu.example.com"
GPU_CLASS = "gpu.example.com"
DEVICES_PER_PCIE_ROOT = 2


def gpu_device_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": GPU_CLASS},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}]},
    }


def gpu_slice(node_name: str, devices: int) -> dict[str, Any]:
    """One node-local slice with `devices` GPUs, two per PCIe root."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{GPU_DRIVER}"},
        "spec": {
            "driver": GPU_DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {
                        "model": {"string": "sim-gpu"},
                        "index": {"int": i},
                        "pcieRoot": {"string": f"pci-{i // DEVICES_PER_PCIE_ROOT}"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(devices)
            ],
        },
    }


def gpu_slices(nodes: Sequence[dict[str, Any]], devices: int) -> list[dict[str, Any]]:
    objects = [gpu_slice(str(n["metadata"]["name"]), devices) for n in nodes]
    return [gpu_device_class(), *objects] if objects else []


def gpu_claim_template(count: int, namespace: str = DEFAULT_NAMESPACE) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": f"gpu-{count}", "namespace": namespace},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "gpu", "exactly": {"deviceClassName": GPU_CLASS, "count": count}}
                    ]
                }
            }
        },
    }


def claim_gpus(pods: Sequence[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """Give every pod a claim for `count` GPUs from one template; returns the template."""
    template = gpu_claim_template(count)
    for pod in pods:
        spec = pod["spec"]
        spec["resourceClaims"] = [
            {"name": "gpu", "resourceClaimTemplateName": template["metadata"]["name"]}
        ]
        for container in spec.get("containers") or ():
            container.setdefault("resources", {})["claims"] = [{"name": "gpu"}]
    return [template]
