"""The writes for the claim of a pod's extended resources: PreBind creates it and records it
in the pod's status; Unreserve, or PostFilter for one an earlier attempt left, deletes it."""

from __future__ import annotations

from collections.abc import Sequence

from plugins.dynamic_resources import messages
from plugins.dynamic_resources.extended_claim import creation_body
from plugins.dynamic_resources.names import CLAIM_FINALIZER
from plugins.dynamic_resources.names import RESOURCE_CLAIMS
from plugins.dynamic_resources.prebind import ATTEMPTS
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.objects.raw import RawObject


class ExtendedClaimError(Exception):
    """A write for the extended resource claim failed; the text is upstream's."""


async def create_claim(handle: Handle, claim: RawObject) -> RawObject:
    """Create the claim (the server names it from its generateName); counted by outcome."""
    namespace = str(claim["metadata"].get("namespace") or "")
    try:
        created = await handle.api.create(RESOURCE_CLAIMS, creation_body(claim))
    except APIError as exc:
        handle.plugin_metrics.resource_claim_create("failure")
        raise ExtendedClaimError(messages.extended_claim_not_created(namespace, exc.text)) from exc
    handle.plugin_metrics.resource_claim_create("success")
    return created


async def record_in_pod(
    handle: Handle, pod: Pod, claim_name: str, mappings: Sequence[dict[str, str]]
) -> None:
    """`status.extendedResourceClaimStatus`: the claim, and which of its requests serves each
    container's resource (the kubelet hands the devices to the containers from it)."""
    if not mappings:
        raise ExtendedClaimError(messages.no_request_mappings(pod.namespace, pod.name))
    status = {"requestMappings": list(mappings), "resourceClaimName": claim_name}
    try:
        await handle.api.patch_pod_status(
            pod.namespace, pod.name, {"extendedResourceClaimStatus": status}
        )
    except APIError as exc:
        raise ExtendedClaimError(
            messages.extended_status_not_written(pod.namespace, pod.name, exc.text)
        ) from exc


async def delete_claim(handle: Handle, namespace: str, name: str) -> None:
    """Take off the finalizer PreBind put on (so the claim goes at once), then delete it. A
    claim gone already is fine; a conflict reads the claim again, as upstream retries."""
    for attempt in range(ATTEMPTS):
        try:
            claim = await handle.api.get(RESOURCE_CLAIMS, namespace, name)
        except NotFoundError:
            return
        meta = claim.get("metadata") or {}
        finalizers = list(meta.get("finalizers") or ())
        if CLAIM_FINALIZER not in finalizers:
            break
        finalizers.remove(CLAIM_FINALIZER)
        patch = {
            "metadata": {"resourceVersion": meta.get("resourceVersion"), "finalizers": finalizers}
        }
        try:
            await handle.api.patch_object(RESOURCE_CLAIMS, namespace, name, patch)
            break
        except ConflictError:
            if attempt == ATTEMPTS - 1:
                raise
    try:
        await handle.api.delete(RESOURCE_CLAIMS, namespace, name)
    except NotFoundError:
        return
