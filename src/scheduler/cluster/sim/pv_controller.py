"""A small PV controller and provisioner for the in-memory cluster.

The in-memory cluster has no kube-controller-manager, so nothing would finish the volume
bindings the scheduler starts. This controller does the part of that work scenarios need:

- a new PV without a claim becomes Available;
- a PV whose claimRef names an existing claim gets bound to it: the claim's spec.volumeName,
  the bind-completed annotation and phase Bound on both objects;
- a claim pre-bound to a PV by name makes that PV point back at it;
- a claim the scheduler annotated with volume.kubernetes.io/selected-node, whose StorageClass
  has a provisioner, gets a new PV reachable from that node (by the driver's topology keys in
  the node's CSINode, else the node's zone, else its hostname), which is then bound;
- an unbound claim of an Immediate class binds to the smallest Available PV that fits, or gets
  a PV without node affinity if its class can provision.

`sync` is one finite pass; `run` repeats it whenever a PV or PVC changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.cluster.sim.cluster import SimCluster
from scheduler.cluster.sim.controller_loop import sync_on_changes
from scheduler.objects.labels import SelectorError
from scheduler.objects.labels import parse_label_selector
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import int_value
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import annotations_of
from scheduler.objects.raw import metadata_of
from scheduler.objects.raw import spec_of
from scheduler.objects.raw import storage_class_of
from scheduler.objects.volume_annotations import ANN_BIND_COMPLETED
from scheduler.objects.volume_annotations import ANN_BOUND_BY_CONTROLLER
from scheduler.objects.volume_annotations import ANN_SELECTED_NODE
from scheduler.objects.volume_annotations import NOT_SUPPORTED_PROVISIONER

PVS = "persistentvolumes"
PVCS = "persistentvolumeclaims"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


def _bytes(value: Any) -> int:
    try:
        return int_value(value) if value is not None else 0
    except (QuantityError, ValueError, TypeError):
        return 0


def _request(pvc: RawObject) -> Any:
    return ((spec_of(pvc).get("resources") or {}).get("requests") or {}).get("storage")


def _claim_key(pvc: RawObject) -> tuple[str, str]:
    return _ref_key(metadata_of(pvc))


def _ref_key(ref: Mapping[str, Any]) -> tuple[str, str]:
    """The (namespace, name) of a claim's metadata or of a claimRef naming one."""
    return (str(ref.get("namespace") or DEFAULT_NAMESPACE), str(ref.get("name")))


def _refers_to(pv: RawObject, pvc: RawObject) -> bool:
    ref = spec_of(pv).get("claimRef")
    if ref is None or _ref_key(ref) != _claim_key(pvc):
        return False
    uid = ref.get("uid")
    return not uid or uid == metadata_of(pvc).get("uid")


def _fits(pv: RawObject, pvc: RawObject) -> bool:
    """Whether an unclaimed, Available PV can serve the claim (class, size, modes, selector)."""
    if spec_of(pv).get("claimRef") is not None or (pv.get("status") or {}).get("phase") != (
        "Available"
    ):
        return False
    if storage_class_of(pv) != storage_class_of(pvc):
        return False
    if _bytes((spec_of(pv).get("capacity") or {}).get("storage")) < _bytes(_request(pvc)):
        return False
    if (spec_of(pv).get("volumeMode") or "Filesystem") != (
        spec_of(pvc).get("volumeMode") or "Filesystem"
    ):
        return False
    if not set(spec_of(pvc).get("accessModes") or ()) <= set(spec_of(pv).get("accessModes") or ()):
        return False
    try:
        selector = parse_label_selector(spec_of(pvc).get("selector"))
    except SelectorError:
        return False
    return selector is None or selector.matches(metadata_of(pv).get("labels") or {})


class PVBinderController:
    """Binds and provisions volumes in a SimCluster; start `run()` as a task."""

    def __init__(self, sim: SimCluster) -> None:
        self._sim = sim

    async def run(self) -> None:
        """Sync after every PV or PVC change until cancelled or the cluster closes."""
        await sync_on_changes(self._sim, (PVS, PVCS), self.sync, "pv-controller")

    async def sync(self) -> int:
        """One pass over all PVs and PVCs; returns how many writes it made."""
        writes = await self._claim_volumes()
        writes += await self._complete_bindings()
        writes += await self._mark_available()
        return writes

    # ---- claims looking for a volume -----------------------------------------------------

    async def _claim_volumes(self) -> int:
        writes = 0
        pvs = self._sim.objects(PVS)
        for pvc in self._sim.objects(PVCS):
            if (pvc.get("status") or {}).get("phase") == "Bound" or any(
                _refers_to(pv, pvc) for pv in pvs
            ):
                continue
            volume_name = str(spec_of(pvc).get("volumeName") or "")
            if volume_name:
                writes += await self._point_back(volume_name, pvc, pvs)
                continue
            storage_class = self._storage_class(pvc)
            selected = annotations_of(pvc).get(ANN_SELECTED_NODE)
            if selected is not None:
                if storage_class is not None and _can_provision(storage_class):
                    await self._provision(pvc, storage_class, selected)
                    writes += 1
            elif storage_class is None or storage_class.get("volumeBindingMode") != (
                "WaitForFirstConsumer"
            ):
                writes += await self._bind_immediate(pvc, storage_class, pvs)
            pvs = self._sim.objects(PVS)
        return writes

    def _storage_class(self, pvc: RawObject) -> RawObject | None:
        name = storage_class_of(pvc)
        if not name:
            return None
        return next(
            (c for c in self._sim.objects("storageclasses") if metadata_of(c).get("name") == name),
            None,
        )

    async def _point_back(self, volume_name: str, pvc: RawObject, pvs: list[dict[str, Any]]) -> int:
        pv = next((p for p in pvs if metadata_of(p).get("name") == volume_name), None)
        if pv is None or spec_of(pv).get("claimRef") is not None:
            return 0
        await self._set_claim_ref(pv, pvc)
        return 1

    async def _bind_immediate(
        self, pvc: RawObject, storage_class: RawObject | None, pvs: list[dict[str, Any]]
    ) -> int:
        candidates = [pv for pv in pvs if _fits(pv, pvc)]
        if candidates:
            smallest = min(
                candidates, key=lambda p: _bytes((spec_of(p).get("capacity") or {}).get("storage"))
            )
            await self._set_claim_ref(smallest, pvc)
            return 1
        if storage_class is not None and _can_provision(storage_class):
            await self._provision(pvc, storage_class, None)
            return 1
        return 0

    async def _set_claim_ref(self, pv: RawObject, pvc: RawObject) -> None:
        await self._sim.patch_object(
            PVS,
            "",
            str(metadata_of(pv).get("name")),
            {
                "metadata": {"annotations": {ANN_BOUND_BY_CONTROLLER: "yes"}},
                "spec": {"claimRef": _claim_ref(pvc)},
            },
        )

    # ---- provisioning --------------------------------------------------------------------

    async def _provision(
        self, pvc: RawObject, storage_class: RawObject, node_name: str | None
    ) -> None:
        provisioner = str(storage_class.get("provisioner"))
        name = f"pvc-{metadata_of(pvc).get('uid')}"
        spec: dict[str, Any] = {
            "capacity": {"storage": _request(pvc) or "0"},
            "accessModes": list(spec_of(pvc).get("accessModes") or ()),
            "volumeMode": spec_of(pvc).get("volumeMode") or "Filesystem",
            "storageClassName": storage_class_of(pvc),
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
            "claimRef": _claim_ref(pvc),
            "csi": {"driver": provisioner, "volumeHandle": name},
        }
        if node_name is not None:
            affinity = self._node_affinity(node_name, provisioner)
            if affinity is not None:
                spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [affinity]}}
        await self._sim.create(
            PVS,
            {
                "metadata": {
                    "name": name,
                    "annotations": {
                        ANN_PROVISIONED_BY: provisioner,
                        ANN_BOUND_BY_CONTROLLER: "yes",
                    },
                },
                "spec": spec,
            },
        )

    def _node_affinity(self, node_name: str, driver: str) -> dict[str, Any] | None:
        """A node selector term that keeps the new volume where the node is."""
        node = next(
            (n for n in self._sim.objects("nodes") if metadata_of(n).get("name") == node_name), None
        )
        if node is None:
            return None
        labels: Mapping[str, str] = metadata_of(node).get("labels") or {}
        keys = self._driver_topology_keys(node_name, driver)
        if not keys:
            keys = [ZONE_LABEL] if ZONE_LABEL in labels else [HOSTNAME_LABEL]
        expressions = [
            {"key": key, "operator": "In", "values": [labels[key]]} for key in keys if key in labels
        ]
        if not expressions:
            expressions = [{"key": HOSTNAME_LABEL, "operator": "In", "values": [node_name]}]
        return {"matchExpressions": expressions}

    def _driver_topology_keys(self, node_name: str, driver: str) -> list[str]:
        for csi_node in self._sim.objects("csinodes"):
            if metadata_of(csi_node).get("name") != node_name:
                continue
            for entry in spec_of(csi_node).get("drivers") or ():
                if entry.get("name") == driver:
                    return [str(k) for k in entry.get("topologyKeys") or ()]
        return []

    # ---- finishing bindings ----------------------------------------------------------

    async def _complete_bindings(self) -> int:
        writes = 0
        claims = {_claim_key(pvc): pvc for pvc in self._sim.objects(PVCS)}
        for pv in self._sim.objects(PVS):
            ref = spec_of(pv).get("claimRef")
            if ref is None:
                continue
            pvc = claims.get(_ref_key(ref))
            if pvc is None or not _refers_to(pv, pvc):
                continue
            pv_name = str(metadata_of(pv).get("name"))
            if spec_of(pvc).get("volumeName") not in (None, "", pv_name):
                continue  # the claim wants another volume
            if not ref.get("uid") or (pv.get("status") or {}).get("phase") != "Bound":
                await self._sim.patch_object(
                    PVS,
                    "",
                    pv_name,
                    {"spec": {"claimRef": _claim_ref(pvc)}, "status": {"phase": "Bound"}},
                )
                writes += 1
            if (
                ANN_BIND_COMPLETED not in annotations_of(pvc)
                or (pvc.get("status") or {}).get("phase") != "Bound"
            ):
                await self._bind_claim(pvc, pv)
                writes += 1
        return writes

    async def _bind_claim(self, pvc: RawObject, pv: RawObject) -> None:
        annotations = {ANN_BIND_COMPLETED: "yes"}
        if not spec_of(pvc).get("volumeName"):
            annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        namespace, name = _claim_key(pvc)
        await self._sim.patch_object(
            PVCS,
            namespace,
            name,
            {
                "metadata": {"annotations": annotations},
                "spec": {"volumeName": metadata_of(pv).get("name")},
                "status": {
                    "phase": "Bound",
                    "accessModes": list(spec_of(pv).get("accessModes") or ()),
                    "capacity": dict(spec_of(pv).get("capacity") or {}),
                },
            },
        )

    async def _mark_available(self) -> int:
        writes = 0
        for pv in self._sim.objects(PVS):
            phase = (pv.get("status") or {}).get("phase") or "Pending"
            if phase == "Pending" and spec_of(pv).get("claimRef") is None:
                await self._sim.patch_object(
                    PVS, "", str(metadata_of(pv).get("name")), {"status": {"phase": "Available"}}
                )
                writes += 1
        return writes


def _can_provision(storage_class: RawObject) -> bool:
    provisioner = storage_class.get("provisioner")
    return bool(provisioner) and provisioner != NOT_SUPPORTED_PROVISIONER


def _claim_ref(pvc: RawObject) -> dict[str, Any]:
    namespace, name = _claim_key(pvc)
    return {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": namespace,
        "name": name,
        "uid": metadata_of(pvc).get("uid") or "",
        "resourceVersion": metadata_of(pvc).get("resourceVersion") or "",
    }
