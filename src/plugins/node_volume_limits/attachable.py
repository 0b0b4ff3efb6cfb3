"""Which CSI volumes a pod attaches: unique volume name -> its driver.

A PVC counts through its bound PV's `spec.csi` (driver and volume handle). A claim not bound
yet counts through its StorageClass's provisioner, under a name made unique per claim with a
random prefix, so it is never mistaken for an existing volume. In-tree volumes (a PV or an
inline volume of the pod) count as the CSI volume CSI migration makes of them, on a node with
a CSINode and for the plugins migrated there (`plugins.helpers.csi_migration`), as upstream
counts them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugins.helpers import csi_migration
from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import STORAGE_CLASSES
from plugins.helpers.volumes import ephemeral_owner_error
from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import namespace_of
from plugins.helpers.volumes import pod_volumes
from plugins.node_volume_limits.attachments import AttachedVolumes
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import spec_of
from scheduler.objects.raw import storage_class_of

CSINode = Mapping[str, Any] | None
# CSI migration counts an in-tree volume only on a node with a CSINode, whatever it says (as
# upstream's isCSIMigrationOn): the pod's own volumes depend on the node through that alone.
_ANY_CSI_NODE: Mapping[str, Any] = {}

_PREFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_PREFIX_LENGTH = 32


def counts_volumes(pod: Pod) -> bool:
    """Whether the pod has a volume this plugin may count: a claim, a generic ephemeral
    volume, or an inline volume CSI migration translates (otherwise PreFilter skips)."""
    return any(
        "persistentVolumeClaim" in volume
        or "ephemeral" in volume
        or csi_migration.inline_plugin(volume) is not None
        for volume in pod_volumes(pod)
    )


class VolumeResolver:
    """Resolves pods' volumes to CSI volumes through the PVC, PV and StorageClass listers."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._prefix = "".join(handle.rng.choice(_PREFIX_ALPHABET) for _ in range(_PREFIX_LENGTH))
        # Whether the last resolution counted an in-tree volume as migrated.
        self._migrated = False

    def new_pod_volumes(
        self, pod: Pod
    ) -> tuple[AttachedVolumes | Status, AttachedVolumes | Status]:
        """The volumes of the pod being scheduled, as a node with a CSINode sees them and as
        one without does (they differ only by in-tree volumes); its claims must exist."""
        self._migrated = False
        with_csi_node = self._resolve(pod, _ANY_CSI_NODE, new_pod=True)
        if not self._migrated:
            return with_csi_node, with_csi_node
        return with_csi_node, self._resolve(pod, None, new_pod=True)

    def existing_pod_volumes(
        self, pod: Pod, csi_node: CSINode, into: AttachedVolumes
    ) -> Status | None:
        """Add the volumes of a pod already on the node; claims that are gone are not counted."""
        found = self._resolve(pod, csi_node, new_pod=False)
        if isinstance(found, Status):
            return found
        into.update(found)
        return None

    def _resolve(self, pod: Pod, csi_node: CSINode, *, new_pod: bool) -> AttachedVolumes | Status:
        result: AttachedVolumes = {}
        pvcs = self._handle.lister(PVCS)
        for volume in pod_volumes(pod):
            ephemeral = "ephemeral" in volume
            if "persistentVolumeClaim" in volume:
                claim_name = str(volume["persistentVolumeClaim"].get("claimName") or "")
            elif ephemeral:
                # The ephemeral volume controller names the claim <pod name>-<volume name>.
                claim_name = f"{pod.name}-{volume.get('name', '')}"
            else:
                failure = self._add_inline(volume, pod, csi_node, result)
                if failure is not None:
                    return failure
                continue
            if not claim_name:
                return Status.from_error("PersistentVolumeClaim had no name")
            pvc = pvcs.get(pod.namespace, claim_name)
            if pvc is None:
                if new_pod:
                    # The pod cannot run without its claim: it waits for the claim to appear.
                    return Status.unresolvable(
                        f"looking up PVC {pod.namespace}/{claim_name}: "
                        f'persistentvolumeclaim "{claim_name}" not found'
                    )
                continue
            if ephemeral:
                owner_error = ephemeral_owner_error(pod, pvc)
                if owner_error is not None:
                    return Status.from_error(owner_error)
            driver, handle = self._driver_and_handle(pvc, csi_node)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver
        return result

    def _driver_and_handle(self, pvc: RawObject, csi_node: CSINode) -> tuple[str, str]:
        volume_name = str(spec_of(pvc).get("volumeName") or "")
        if not volume_name:
            return self._from_storage_class(pvc, csi_node)
        pv = self._handle.lister(PVS).get("", volume_name)
        if pv is None:
            # Deleted, or the claim is pre-bound to a volume not created yet.
            return self._from_storage_class(pvc, csi_node)
        csi: Mapping[str, object] | None = spec_of(pv).get("csi")
        if csi is not None:
            return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")
        plugin = csi_migration.pv_plugin(pv)
        if plugin is None or not self._migrates(csi_node, plugin):
            return "", ""
        try:
            return csi_migration.translate_pv(pv)
        except csi_migration.TranslationError:
            return "", ""  # upstream counts nothing it cannot translate

    def _from_storage_class(self, pvc: RawObject, csi_node: CSINode) -> tuple[str, str]:
        class_name = storage_class_of(pvc)
        if not class_name:
            # An unbound claim without a class binds immediately: it is not counted here.
            return "", ""
        storage_class = self._handle.lister(STORAGE_CLASSES).get("", class_name)
        if storage_class is None:
            return "", ""
        handle = f"{self._prefix}-{namespace_of(pvc) or DEFAULT_NAMESPACE}/{name_of(pvc)}"
        provisioner = str(storage_class.get("provisioner") or "")
        if csi_migration.is_migratable_provisioner(provisioner):
            if not self._migrates(csi_node, provisioner):
                return "", ""
            try:
                return csi_migration.csi_driver_of(provisioner), handle
            except csi_migration.TranslationError:
                return "", ""
        return provisioner, handle

    def _add_inline(
        self, volume: RawObject, pod: Pod, csi_node: CSINode, into: AttachedVolumes
    ) -> Status | None:
        """Count an inline in-tree volume as the CSI volume it migrates to; an Error if it
        cannot be translated (upstream fails the node then)."""
        plugin = csi_migration.inline_plugin(volume)
        if plugin is None or not self._migrates(csi_node, plugin):
            return None
        name = volume.get("name", "")
        try:
            translated = csi_migration.translate_inline(volume, pod.namespace)
        except csi_migration.TranslationError as exc:
            return Status.from_error(f"converting volume({name}) from inline to csi: {exc}")
        if translated is not None:
            driver, handle = translated
            into[f"{driver}/{handle}"] = driver
        return None

    def _migrates(self, csi_node: CSINode, plugin: str) -> bool:
        migrated = csi_migration.migration_on(csi_node, plugin)
        self._migrated = self._migrated or migrated
        return migrated
