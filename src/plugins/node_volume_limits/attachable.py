"""Which CSI volumes a pod attaches: unique volume name -> its driver.

A PVC counts through its bound PV's `spec.csi` (driver and volume handle). A claim not bound
yet counts through its StorageClass's provisioner, under a name made unique per claim with a
random prefix, so it is never mistaken for an existing volume. In-tree volume types are not
translated to CSI drivers.
"""

from __future__ import annotations

from collections.abc import Mapping

from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import STORAGE_CLASSES
from plugins.helpers.volumes import ephemeral_owner_error
from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import namespace_of
from plugins.helpers.volumes import pod_claims
from plugins.node_volume_limits.attachments import AttachedVolumes
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import spec_of
from scheduler.objects.raw import storage_class_of

_PREFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_PREFIX_LENGTH = 32


class VolumeResolver:
    """Resolves pods' claims to CSI volumes through the PVC, PV and StorageClass listers."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._prefix = "".join(handle.rng.choice(_PREFIX_ALPHABET) for _ in range(_PREFIX_LENGTH))

    def new_pod_volumes(self, pod: Pod) -> AttachedVolumes | Status:
        """The volumes of the pod being scheduled; its claims must exist."""
        return self._resolve(pod, new_pod=True)

    def existing_pod_volumes(self, pod: Pod, into: AttachedVolumes) -> Status | None:
        """Add the volumes of a pod already on the node; claims that are gone are not counted."""
        found = self._resolve(pod, new_pod=False)
        if isinstance(found, Status):
            return found
        into.update(found)
        return None

    def _resolve(self, pod: Pod, *, new_pod: bool) -> AttachedVolumes | Status:
        result: AttachedVolumes = {}
        pvcs = self._handle.lister(PVCS)
        for use in pod_claims(pod):
            if not use.claim_name:
                return Status.from_error("PersistentVolumeClaim had no name")
            pvc = pvcs.get(pod.namespace, use.claim_name)
            if pvc is None:
                if new_pod:
                    # The pod cannot run without its claim: it waits for the claim to appear.
                    return Status.unresolvable(
                        f"looking up PVC {pod.namespace}/{use.claim_name}: "
                        f'persistentvolumeclaim "{use.claim_name}" not found'
                    )
                continue
            if use.ephemeral:
                owner_error = ephemeral_owner_error(pod, pvc)
                if owner_error is not None:
                    return Status.from_error(owner_error)
            driver, handle = self._driver_and_handle(pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver
        return result

    def _driver_and_handle(self, pvc: RawObject) -> tuple[str, str]:
        volume_name = str(spec_of(pvc).get("volumeName") or "")
        if not volume_name:
            return self._from_storage_class(pvc)
        pv = self._handle.lister(PVS).get("", volume_name)
        if pv is None:
            # Deleted, or the claim is pre-bound to a volume not created yet.
            return self._from_storage_class(pvc)
        csi: Mapping[str, object] | None = spec_of(pv).get("csi")
        if csi is None:
            return "", ""
        return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")

    def _from_storage_class(self, pvc: RawObject) -> tuple[str, str]:
        class_name = storage_class_of(pvc)
        if not class_name:
            # An unbound claim without a class binds immediately: it is not counted here.
            return "", ""
        storage_class = self._handle.lister(STORAGE_CLASSES).get("", class_name)
        if storage_class is None:
            return "", ""
        handle = f"{self._prefix}-{namespace_of(pvc) or DEFAULT_NAMESPACE}/{name_of(pvc)}"
        return str(storage_class.get("provisioner") or ""), handle
