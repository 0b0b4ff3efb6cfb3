"""Builders for storage objects (PVC, PV, StorageClass, CSINode, CSIDriver, CSIStorageCapacity)
and for pod volumes, as raw API dicts.

pvc = make_pvc("data").storage_class("fast").request("10Gi").dict()
pv = make_pv("pv-1").capacity("20Gi").storage_class("fast").zone("a").available().dict()
pod = make_pod("web").spec(volumes=[claim_volume("data")]).obj()
"""

from __future__ import annotations

import itertools
from typing import Any
from typing import Self

from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.volume_annotations import ANN_BIND_COMPLETED
from scheduler.objects.volume_annotations import ANN_SELECTED_NODE
from scheduler.testing.object_builder import ObjectBuilder

_uids = itertools.count(1)


class _VolumeObjectBuilder(ObjectBuilder):
    """The fields a PersistentVolumeClaim and a PersistentVolume both have."""

    def storage_class(self, name: str) -> Self:
        self._spec["storageClassName"] = name
        return self

    def attributes_class(self, name: str) -> Self:
        """`spec.volumeAttributesClassName`."""
        self._spec["volumeAttributesClassName"] = name
        return self

    def access_modes(self, *modes: str) -> Self:
        self._spec["accessModes"] = list(modes)
        return self

    def phase(self, phase: str) -> Self:
        self._raw["status"]["phase"] = phase
        return self


class PVCBuilder(_VolumeObjectBuilder):
    def __init__(self, name: str, namespace: str) -> None:
        super().__init__(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "uid": f"uid-pvc-{name}-{next(_uids)}",
                },
                "spec": {"accessModes": ["ReadWriteOnce"]},
                "status": {"phase": "Pending"},
            }
        )

    def request(self, storage: str) -> Self:
        self._spec["resources"] = {"requests": {"storage": storage}}
        return self

    def volume_name(self, name: str) -> Self:
        self._spec["volumeName"] = name
        return self

    def bound_to(self, volume: str) -> Self:
        """Fully bound, as the PV controller leaves a claim."""
        self._spec["volumeName"] = volume
        self._raw["status"]["phase"] = "Bound"
        return self.annotation(ANN_BIND_COMPLETED, "yes")

    def selected_node(self, node: str) -> Self:
        return self.annotation(ANN_SELECTED_NODE, node)

    def selector(self, **labels: str) -> Self:
        self._spec["selector"] = {"matchLabels": labels}
        return self

    def owned_by(self, pod_uid: str) -> Self:
        self._meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": pod_uid, "controller": True}
        ]
        return self


class PVBuilder(_VolumeObjectBuilder):
    def __init__(self, name: str) -> None:
        super().__init__(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": name, "uid": f"uid-pv-{name}-{next(_uids)}"},
                "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}},
                "status": {},
            }
        )

    def capacity(self, storage: str) -> Self:
        self._spec["capacity"] = {"storage": storage}
        return self

    def csi(self, driver: str, handle: str = "") -> Self:
        self._spec["csi"] = {"driver": driver, "volumeHandle": handle or self._meta["name"]}
        return self

    def node_affinity(self, key: str, *values: str) -> Self:
        """Add a required term `key In values` (terms are ORed)."""
        terms = (
            self._spec.setdefault("nodeAffinity", {})
            .setdefault("required", {})
            .setdefault("nodeSelectorTerms", [])
        )
        terms.append({"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]})
        return self

    def zone(self, *zones: str) -> Self:
        return self.node_affinity(ZONE_LABEL, *zones)

    def on_host(self, *hostnames: str) -> Self:
        return self.node_affinity(HOSTNAME_LABEL, *hostnames)

    def claim(self, name: str, namespace: str = DEFAULT_NAMESPACE, uid: str = "") -> Self:
        ref = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name}
        if uid:
            ref["uid"] = uid
        self._spec["claimRef"] = ref
        return self

    def available(self) -> Self:
        self._raw["status"]["phase"] = "Available"
        return self


class StorageClassBuilder(ObjectBuilder):
    def __init__(self, name: str, provisioner: str) -> None:
        super().__init__(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": name},
                "provisioner": provisioner,
                "volumeBindingMode": "Immediate",
            }
        )

    def wait_for_first_consumer(self) -> Self:
        self._raw["volumeBindingMode"] = "WaitForFirstConsumer"
        return self

    def allowed_zones(self, *zones: str) -> Self:
        self._raw["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": ZONE_LABEL, "values": list(zones)}]}
        ]
        return self


def make_pvc(name: str, namespace: str = DEFAULT_NAMESPACE) -> PVCBuilder:
    return PVCBuilder(name, namespace)


def make_pv(name: str) -> PVBuilder:
    return PVBuilder(name)


def make_storage_class(name: str, provisioner: str = "csi.example.com") -> StorageClassBuilder:
    return StorageClassBuilder(name, provisioner)


def make_csi_node(node: str, **drivers: int | None) -> dict[str, Any]:
    """A CSINode with one entry per driver (names with "." passed via **{...}); a count of None
    declares no attach limit."""
    entries: list[dict[str, Any]] = []
    for driver, count in drivers.items():
        entry: dict[str, Any] = {"name": driver, "nodeID": node}
        if count is not None:
            entry["allocatable"] = {"count": count}
        entries.append(entry)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": node},
        "spec": {"drivers": entries},
    }


def make_csi_driver(
    name: str, *, storage_capacity: bool = False, required_on_node: bool = False
) -> dict[str, Any]:
    """A CSIDriver; `required_on_node` sets `preventPodSchedulingIfMissing` (read with the
    VolumeLimitScaling gate)."""
    spec: dict[str, Any] = {"storageCapacity": storage_capacity}
    if required_on_node:
        spec["preventPodSchedulingIfMissing"] = True
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name},
        "spec": spec,
    }


def make_volume_attachment(name: str, attacher: str, node: str, pv: str) -> dict[str, Any]:
    """A VolumeAttachment of PersistentVolume `pv` to `node` by driver `attacher`."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": {
            "attacher": attacher,
            "nodeName": node,
            "source": {"persistentVolumeName": pv},
        },
    }


def make_storage_capacity(
    name: str,
    storage_class: str,
    capacity: str,
    *,
    zone: str | None = None,
    maximum_volume_size: str | None = None,
    namespace: str = "kube-system",
) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": namespace},
        "storageClassName": storage_class,
        "capacity": capacity,
    }
    if zone is not None:
        raw["nodeTopology"] = {"matchLabels": {ZONE_LABEL: zone}}
    if maximum_volume_size is not None:
        raw["maximumVolumeSize"] = maximum_volume_size
    return raw


def claim_volume(claim: str, name: str = "") -> dict[str, Any]:
    """A pod volume using a PVC."""
    return {"name": name or f"vol-{claim}", "persistentVolumeClaim": {"claimName": claim}}


def ephemeral_volume(name: str) -> dict[str, Any]:
    """A generic ephemeral volume (its claim is named <pod>-<name>)."""
    return {
        "name": name,
        "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}},
    }
