"""QueueingHints of NodeVolumeLimits."""

from __future__ import annotations

from plugins.helpers import deleted_pod
from plugins.helpers.volumes import claim_event_hint
from plugins.helpers.volumes import object_change
from plugins.helpers.volumes import pod_claims
from plugins.node_volume_limits.limits import csi_node_counts
from scheduler.framework import Pod
from scheduler.framework import QueueingHint


def after_assigned_pod_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """A pod that used claims left its node, or the node it was nominated to: attach slots
    may be free."""
    deleted = deleted_pod(old, new)
    if not (deleted.node_name or deleted.nominated_node_name) or not pod_claims(deleted):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def after_attachment_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """A volume was detached from a node: a slot is free for a pod with a claim of its own
    (upstream looks only at `persistentVolumeClaim` volumes, not ephemeral ones)."""
    del old, new  # any detached volume frees a slot of its node
    if any(not use.ephemeral for use in pod_claims(pod)):
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
