"""QueueingHints of DynamicResources: which claim and pod changes can help a rejected pod."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugins.dynamic_resources.claims import ClaimProblemError
from plugins.dynamic_resources.claims import pod_claim_names
from plugins.dynamic_resources.claims import resolve_pod_claims
from plugins.helpers.event_objects import pod_change
from plugins.helpers.volumes import object_change
from scheduler.framework import Lister
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.objects.raw import DEFAULT_NAMESPACE


def after_claim_change(claims: Lister, pod: Pod, old: object, new: object) -> QueueingHint:
    """A claim of the pod appeared or its status changed, or any claim was deallocated."""
    before, after = object_change(old, new, "ResourceClaim")
    deallocated = (
        before is not None and _allocation(before) is not None and _allocation(after) is None
    )
    meta = after.get("metadata") or {}
    named = (meta.get("namespace") or DEFAULT_NAMESPACE) == pod.namespace and meta.get(
        "name"
    ) in pod_claim_names(pod)
    if not deallocated and not named:
        # Not the pod's claim and no devices freed: skip without resolving every claim (this
        # hint runs for every waiting pod on every claim event).
        return QueueingHint.QUEUE_SKIP
    try:
        uses = resolve_pod_claims(pod, claims)
    except ClaimProblemError:
        return QueueingHint.QUEUE_SKIP
    if deallocated:
        # Deallocated: its devices are free for others.
        return QueueingHint.QUEUE
    uid = meta.get("uid")
    if not any(use.uid == uid for use in uses):
        return QueueingHint.QUEUE_SKIP
    if before is None:
        return QueueingHint.QUEUE
    if (before.get("status") or {}) == (after.get("status") or {}):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def after_pod_change(claims: Lister, pod: Pod, old: object, new: object) -> QueueingHint:
    """The pod's generated claims were named in its status and now all exist."""
    _, modified = pod_change(old, new)
    if modified.uid != pod.uid:
        return QueueingHint.QUEUE_SKIP
    try:
        resolve_pod_claims(modified, claims)
    except ClaimProblemError:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def _allocation(claim: Mapping[str, Any]) -> Any:
    return (claim.get("status") or {}).get("allocation")
