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
    """A pod that used claims left its node: attach slots may be free."""
    deleted = deleted_pod(old, new)
    if not deleted.node_name or not pod_claims(deleted):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def after_claim_added(pod: Pod, old: object, new: object) -> QueueingHint:
    """A claim the pod refers to was created."""
    return claim_event_hint(pod, old, new, ephemeral=True)


def after_csi_node_updated(pod: Pod, old: object, new: object) -> QueueingHint:
    """A driver's attach limit grew or went away."""
    before, after = object_change(old, new, "CSINode")
    old_counts = csi_node_counts(before)
    new_counts = csi_node_counts(after)
    for driver, count in old_counts.items():
        if driver not in new_counts or new_counts[driver] > count:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
