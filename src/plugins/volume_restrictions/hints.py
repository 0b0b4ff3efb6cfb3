"""QueueingHints of VolumeRestrictions."""

from __future__ import annotations

from plugins.helpers import deleted_pod
from plugins.helpers.volumes import claim_event_hint
from plugins.helpers.volumes import pod_claims
from plugins.volume_restrictions.conflicts import conflicts_with_pods
from plugins.volume_restrictions.conflicts import restricted_volumes
from scheduler.framework import Pod
from scheduler.framework import QueueingHint


def after_pod_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """A deleted pod frees a disk the pod shares, or a claim the pod also uses."""
    deleted = deleted_pod(old, new)
    if deleted.namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    if conflicts_with_pods(restricted_volumes(pod), (deleted,)):
        return QueueingHint.QUEUE
    # The claim's access mode is not looked up: sharing the claim is reason enough.
    claims = {use.claim_name for use in pod_claims(pod) if not use.ephemeral}
    if any(use.claim_name in claims for use in pod_claims(deleted) if not use.ephemeral):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def after_claim_added(pod: Pod, old: object, new: object) -> QueueingHint:
    """The claim the pod was waiting for now exists."""
    return claim_event_hint(pod, old, new, ephemeral=False)
