"""Which ResourceClaims a pod uses: named claims directly, claims generated from a template
through the pod's `status.resourceClaimStatuses`, and the checks that make a claim usable."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plugins.dynamic_resources import messages
from scheduler.framework import Lister
from scheduler.framework import Pod
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject


class ClaimProblemError(Exception):
    """The pod cannot be scheduled until one of its claims changes (or appears)."""


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One entry of `pod.spec.resourceClaims` resolved to its ResourceClaim object."""

    entry: str
    claim: RawObject

    @property
    def name(self) -> str:
        return str(self.claim["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.claim["metadata"].get("namespace") or "")

    @property
    def uid(self) -> str:
        return str(self.claim["metadata"].get("uid") or "")

    @property
    def allocation(self) -> Mapping[str, Any] | None:
        found: Mapping[str, Any] | None = (self.claim.get("status") or {}).get("allocation")
        return found

    @property
    def reserved_for(self) -> Sequence[Mapping[str, Any]]:
        found: Sequence[Mapping[str, Any]] = (self.claim.get("status") or {}).get(
            "reservedFor"
        ) or ()
        return found

    def is_reserved_for(self, pod: Pod) -> bool:
        return any(ref.get("uid") == pod.uid for ref in self.reserved_for)

    @property
    def requests(self) -> Sequence[Mapping[str, Any]]:
        devices = (self.claim.get("spec") or {}).get("devices") or {}
        found: Sequence[Mapping[str, Any]] = devices.get("requests") or ()
        return found


def pod_claim_entries(pod: Pod) -> Sequence[Mapping[str, Any]]:
    entries: Sequence[Mapping[str, Any]] = (pod.raw.get("spec") or {}).get("resourceClaims") or ()
    return entries


def pod_claim_names(pod: Pod) -> set[str]:
    """Names of the claims the pod refers to, directly or as generated for it."""
    names = {
        str(e["resourceClaimName"]) for e in pod_claim_entries(pod) if e.get("resourceClaimName")
    }
    for status in (pod.raw.get("status") or {}).get("resourceClaimStatuses") or ():
        if status.get("resourceClaimName"):
            names.add(str(status["resourceClaimName"]))
    return names


def has_claims(pod: Pod) -> bool:
    return bool(pod_claim_entries(pod))


def _claim_name(pod: Pod, entry: Mapping[str, Any]) -> tuple[str | None, bool]:
    """(claim name or None when none was generated on purpose, whether the pod must own it)."""
    entry_name = str(entry.get("name") or "")
    if entry.get("resourceClaimName"):
        return str(entry["resourceClaimName"]), False
    if entry.get("resourceClaimTemplateName"):
        statuses = (pod.raw.get("status") or {}).get("resourceClaimStatuses") or ()
        for status in statuses:
            if status.get("name") == entry_name:
                generated = status.get("resourceClaimName")
                return (str(generated) if generated else None), True
        raise ClaimProblemError(messages.claim_not_created(pod.namespace, pod.name))
    raise ClaimProblemError(messages.unsupported_pod_claim(pod.namespace, pod.name, entry_name))


def _owned_by(pod: Pod, claim: RawObject) -> bool:
    meta = claim.get("metadata") or {}
    if (meta.get("namespace") or DEFAULT_NAMESPACE) != pod.namespace:
        return False
    return any(
        owner.get("controller") and owner.get("uid") == pod.uid
        for owner in meta.get("ownerReferences") or ()
    )


def resolve_pod_claims(pod: Pod, claims: Lister) -> list[PodClaim]:
    """The pod's claims in spec order; raises ClaimProblemError with upstream's text for the first
    one that is missing, being deleted or generated for another pod."""
    resolved: list[PodClaim] = []
    for entry in pod_claim_entries(pod):
        name, must_own = _claim_name(pod, entry)
        if name is None:
            continue
        claim = claims.get(pod.namespace, name)
        if claim is None:
            raise ClaimProblemError(messages.claim_not_found(pod.namespace, name))
        meta = claim.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            raise ClaimProblemError(messages.claim_being_deleted(name))
        if must_own and not _owned_by(pod, claim):
            raise ClaimProblemError(
                messages.not_owner(str(meta.get("namespace") or ""), name, pod.namespace, pod.name)
            )
        resolved.append(PodClaim(str(entry.get("name") or ""), claim))
    return resolved
