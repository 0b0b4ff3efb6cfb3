"""PreBind's writes to a ResourceClaim: the finalizer (a normal update), then the allocation
Reserve chose and the pod in `status.reservedFor` (the status subresource), each guarded by
the claim's resourceVersion. On a conflict the claim is read again and the write retried, as
upstream's RetryOnConflict does; a claim allocated by someone else meanwhile is an error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Mapping
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from plugins.dynamic_resources.names import CLAIM_FINALIZER
from plugins.dynamic_resources.names import RESOURCE_CLAIMS
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.objects.raw import RawObject

# upstream's retry.DefaultRetry: five attempts.
ATTEMPTS = 5


class ClaimWriteError(Exception):
    """The claim cannot take the pod (deleted, allocated elsewhere, or a write refused), worded
    as kube-scheduler words it: what was being done, to which claim, and the server's answer.
    `conflict` marks a write refused for a stale resourceVersion, which is retried."""

    def __init__(self, message: str, *, conflict: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict


def _meta(claim: RawObject) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = claim.get("metadata") or {}
    return meta


def _key(claim: RawObject) -> str:
    meta = _meta(claim)
    return f"{meta.get('namespace')}/{meta.get('name')}"


def stamped(allocation: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The allocation as it is written: with `allocationTimestamp`, as kube-scheduler v1.36
    writes every allocation it makes. The field is immutable once the allocation is stored,
    and kube-scheduler adds it to a claim that lacks it whenever it reserves one, a write the
    server refuses; so a claim we allocated without it could never be shared with a pod that
    kube-scheduler schedules."""
    written = dict(allocation)
    written.setdefault("allocationTimestamp", now.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return written


def consumer(pod: Pod) -> dict[str, str]:
    return {"resource": "pods", "name": pod.name, "uid": pod.uid}


@asynccontextmanager
async def _doing(what: str) -> AsyncIterator[None]:
    """An API error inside becomes `<what>: <the server's message>`."""
    try:
        yield
    except APIError as exc:
        raise ClaimWriteError(
            f"{what}: {exc.text}", conflict=isinstance(exc, ConflictError)
        ) from exc


async def reserve_claim(
    handle: Handle, claim: RawObject, pod: Pod, allocation: Mapping[str, Any] | None
) -> str:
    """Record `allocation` (if the scheduler allocated the claim) and the pod as a consumer.
    Returns the resourceVersion the status write was based on: any later version of the claim
    holds the write."""
    current = claim
    for attempt in range(ATTEMPTS):
        if attempt:
            meta = _meta(current)
            async with _doing(f"get updated claim {_key(claim)} after conflict"):
                current = await handle.api.get(
                    RESOURCE_CLAIMS, str(meta.get("namespace")), str(meta.get("name"))
                )
        try:
            return await _write(handle, current, pod, allocation)
        except ClaimWriteError as exc:
            if not exc.conflict or attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable: the last attempt returns or raises")


async def _write(
    handle: Handle, claim: RawObject, pod: Pod, allocation: Mapping[str, Any] | None
) -> str:
    meta = _meta(claim)
    namespace, name, key = str(meta.get("namespace")), str(meta.get("name")), _key(claim)
    if meta.get("deletionTimestamp"):
        raise ClaimWriteError(f"claim {key} got deleted in the meantime")
    status = claim.get("status") or {}
    version = str(meta.get("resourceVersion") or "")
    if allocation is not None:
        if status.get("allocation") is not None:
            raise ClaimWriteError(f"claim {key} got allocated elsewhere in the meantime")
        finalizers = list(meta.get("finalizers") or ())
        if CLAIM_FINALIZER not in finalizers:
            async with _doing(f"add finalizer to claim {key}"):
                await handle.api.patch_object(
                    RESOURCE_CLAIMS,
                    namespace,
                    name,
                    {
                        "metadata": {
                            "resourceVersion": version,
                            "finalizers": [*finalizers, CLAIM_FINALIZER],
                        }
                    },
                )
                # The status write must be based on the claim as it is now.
                claim = await handle.api.get(RESOURCE_CLAIMS, namespace, name)
            meta, status = _meta(claim), claim.get("status") or {}
            version = str(meta.get("resourceVersion") or "")
            # Read again after the finalizer went on: what upstream learns from a conflicting
            # status write and a fresh read.
            if meta.get("deletionTimestamp"):
                raise ClaimWriteError(f"claim {key} got deleted in the meantime")
            if status.get("allocation") is not None:
                raise ClaimWriteError(f"claim {key} got allocated elsewhere in the meantime")
    elif status.get("allocation") is None:
        # Allocated when the pod was scheduled, freed since: the server would refuse a
        # reservation without an allocation anyway.
        raise ClaimWriteError(f"claim {key} got deallocated elsewhere in the meantime")
    reserved = [dict(r) for r in status.get("reservedFor") or ()]
    if not any(r.get("uid") == pod.uid for r in reserved):
        reserved.append(consumer(pod))
    body: dict[str, Any] = {"reservedFor": reserved}
    what = "add reservation"
    if allocation is not None:
        body["allocation"] = stamped(allocation, handle.clock.wall())
        what = "add allocation and reservation"
    async with _doing(f"{what} to claim {key}"):
        await handle.api.patch_object(
            RESOURCE_CLAIMS,
            namespace,
            name,
            {"metadata": {"resourceVersion": version}, "status": body},
            subresource="status",
        )
    return version


async def unreserve_claim(handle: Handle, namespace: str, name: str, pod: Pod) -> None:
    """Take the pod out of `status.reservedFor` of the claim as it is now. The list is written
    whole, guarded by the version it was read from; a conflict (a driver or another pod
    writing the claim meanwhile) reads it again, so the pod is not left holding the claim."""
    for attempt in range(ATTEMPTS):
        claim = await handle.api.get(RESOURCE_CLAIMS, namespace, name)
        meta = _meta(claim)
        status = claim.get("status") or {}
        if not any(r.get("uid") == pod.uid for r in status.get("reservedFor") or ()):
            return
        reserved = [dict(r) for r in status.get("reservedFor") or () if r.get("uid") != pod.uid]
        try:
            await handle.api.patch_object(
                RESOURCE_CLAIMS,
                namespace,
                name,
                {
                    "metadata": {"resourceVersion": meta.get("resourceVersion")},
                    "status": {"reservedFor": reserved},
                },
                subresource="status",
            )
            return
        except ConflictError:
            if attempt == ATTEMPTS - 1:
                raise


async def deallocate_claim(handle: Handle, claim: RawObject) -> None:
    """PostFilter: free an allocated claim that no other pod holds, so it can go elsewhere.

    The whole status goes in one write, as upstream's UpdateStatus of the claim with
    `reservedFor`, `allocation` and `devices` cleared: the API server refuses a status whose
    `devices` name devices that are no longer allocated, so leaving the drivers' entries would
    leave the claim allocated for good. The claim's resourceVersion guards the write, and a
    refusal (APIError) is not retried: upstream reports it as PostFilter's Error."""
    meta = _meta(claim)
    await handle.api.patch_object(
        RESOURCE_CLAIMS,
        str(meta.get("namespace")),
        str(meta.get("name")),
        {
            "metadata": {"resourceVersion": meta.get("resourceVersion")},
            "status": {"allocation": None, "reservedFor": None, "devices": None},
        },
        subresource="status",
    )
