"""QueueingHints of NodeVolumeLimits."""

from __future__ import annotations

from collections.abc import Mapping

from plugins.helpers import csi_migration
from plugins.helpers import deleted_pod
from plugins.helpers.volumes import claim_event_hint
from plugins.helpers.volumes import object_change
from plugins.helpers.volumes import pod_volumes
from plugins.node_volume_limits.attachable import counts_volumes
from plugins.node_volume_limits.limits import csi_node_counts
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.objects.raw import spec_of


def after_assigned_pod_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """A pod with volumes this plugin counts left its node, or the node it was nominated to:
    attach slots may be free."""
    deleted = deleted_pod(old, new)
    if not (deleted.node_name or deleted.nominated_node_name) or not counts_volumes(deleted):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def after_attachment_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """A volume was detached from a node: a slot is free for a pod with a claim of its own
    (upstream looks at `persistentVolumeClaim` volumes, not ephemeral ones), or with an inline
    in-tree volume of the detaching driver."""
    if not isinstance(old, Mapping):
        raise TypeError(f"expected the deleted VolumeAttachment, got {type(old).__name__}")
    attacher = str(spec_of(old).get("attacher") or "")
    for volume in pod_volumes(pod):
        if "persistentVolumeClaim" in volume:
            return QueueingHint.QUEUE
        if csi_migration.inline_plugin(volume) is None:
            continue
        try:
            translated = csi_migration.translate_inline(volume, pod.namespace)
        except csi_migration.TranslationError:
            return QueueingHint.QUEUE  # as upstream: rather a retry than a pod left waiting
        if translated is not None and translated[0] == attacher:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def after_claim_added(pod: Pod, old: object, new: object) -> QueueingHint:
    """A claim the pod refers to was created."""
    return claim_event_hint(pod, old, new, ephemeral=True)


def after_csi_node_updated(pod: Pod, old: object, new: object) -> QueueingHint:
    """A driver's attach limit grew (a driver new to the CSINode grew from 0), as upstream
    judges it."""
    before, after = object_change(old, new, "CSINode")
    old_counts = csi_node_counts(before)
    for driver, count in csi_node_counts(after).items():
        if count > old_counts.get(driver, 0):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
