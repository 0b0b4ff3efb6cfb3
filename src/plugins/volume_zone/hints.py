"""QueueingHints of VolumeZone."""

from __future__ import annotations

from plugins.helpers.volumes import added_or_changed
from plugins.helpers.volumes import claim_event_hint
from plugins.helpers.volumes import is_wait_for_first_consumer
from plugins.helpers.volumes import labels_of
from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import object_change
from plugins.volume_zone.topology import PVTopology
from plugins.volume_zone.topology import pv_topologies
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.objects.raw import RawObject


def after_storage_class_added(pod: Pod, old: object, new: object) -> QueueingHint:
    """A WaitForFirstConsumer class lets the pod's unbound claims wait for it."""
    _, storage_class = object_change(old, new, "StorageClass")
    if is_wait_for_first_consumer(storage_class):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def after_claim_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """One of the pod's claims appeared or changed (e.g. got bound)."""
    return claim_event_hint(pod, old, new, ephemeral=False)


def after_volume_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A new volume, or a volume whose topology labels changed."""
    return added_or_changed(old, new, "PersistentVolume", _topologies)


def _topologies(pv: RawObject) -> list[PVTopology]:
    return pv_topologies(name_of(pv), labels_of(pv))
