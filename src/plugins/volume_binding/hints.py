"""QueueingHints of VolumeBinding."""

from __future__ import annotations

from plugins.helpers.csi_migration import MIGRATED_PLUGINS_ANNOTATION
from plugins.helpers.volumes import added_or_changed
from plugins.helpers.volumes import claim_event_hint
from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import object_change
from plugins.helpers.volumes import pod_volumes
from plugins.volume_binding.provisioning import capacity_limit
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import annotations_of


def after_claim_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Nearly any change to one of the pod's own claims can help it."""
    return claim_event_hint(pod, old, new, ephemeral=True)


def after_storage_class_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A new class, or new allowedTopologies (the binding mode cannot change)."""
    return added_or_changed(old, new, "StorageClass", lambda sc: sc.get("allowedTopologies"))


def after_csi_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A new CSINode, or a change in which in-tree plugins it migrated."""
    return added_or_changed(old, new, "CSINode", _migrated_plugins)


def _migrated_plugins(csi_node: RawObject) -> str | None:
    return annotations_of(csi_node).get(MIGRATED_PLUGINS_ANNOTATION)


def after_csi_driver_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A driver the pod uses inline stopped publishing storage capacity."""
    before, after = object_change(old, new, "CSIDriver")
    if before is None:
        return QueueingHint.QUEUE_SKIP
    driver = name_of(after)
    was = bool((before.get("spec") or {}).get("storageCapacity"))
    now = bool((after.get("spec") or {}).get("storageCapacity"))
    for volume in pod_volumes(pod):
        csi = volume.get("csi")
        if csi is not None and csi.get("driver") == driver and was and not now:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def after_storage_capacity_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """New capacity, or a larger volume size limit."""
    before, after = object_change(old, new, "CSIStorageCapacity")
    if before is None:
        return QueueingHint.QUEUE
    old_limit, new_limit = capacity_limit(before), capacity_limit(after)
    if new_limit is not None and (old_limit is None or new_limit > old_limit):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
