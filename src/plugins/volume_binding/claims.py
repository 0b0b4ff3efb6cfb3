"""A pod's claims as VolumeBinding sees them in PreFilter.

Every claim must exist, must not be lost or being deleted, and a generic ephemeral volume's
claim must belong to the pod. Claims are then sorted into fully bound ones, unbound ones that
wait for their first consumer (the scheduler binds them), and unbound ones that should have
been bound already (Immediate mode, or pre-bound to a volume by name).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from plugins.helpers.volumes import STORAGE_CLASSES
from plugins.helpers.volumes import claim_not_found
from plugins.helpers.volumes import ephemeral_not_yet_created
from plugins.helpers.volumes import ephemeral_owner_error
from plugins.helpers.volumes import is_fully_bound
from plugins.helpers.volumes import is_wait_for_first_consumer
from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import pod_claims
from plugins.volume_binding.assume_cache import AssumeCache
from scheduler.framework import Handle
from scheduler.framework import Lister
from scheduler.framework import Pod
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import spec_of
from scheduler.objects.raw import storage_class_of


@dataclass(frozen=True, slots=True)
class PodVolumeClaims:
    bound: tuple[RawObject, ...] = ()
    delayed: tuple[RawObject, ...] = ()
    immediate: tuple[RawObject, ...] = ()
    # Storage class name -> the PVs of that class (as assumed), for the delayed claims.
    volumes_by_class: Mapping[str, tuple[RawObject, ...]] = field(default_factory=dict)


def claims_problem(pod: Pod, pvcs: Lister) -> str | None:
    """Why the pod's claims cannot be used at all, or None."""
    for use in pod_claims(pod):
        pvc = pvcs.get(pod.namespace, use.claim_name)
        if pvc is None:
            if use.ephemeral:
                return ephemeral_not_yet_created(use.claim_name)
            return claim_not_found(use.claim_name)
        if (pvc.get("status") or {}).get("phase") == "Lost":
            return (
                f'persistentvolumeclaim "{name_of(pvc)}" bound to non-existent persistentvolume '
                f'"{spec_of(pvc).get("volumeName") or ""}"'
            )
        if (pvc.get("metadata") or {}).get("deletionTimestamp"):
            return f'persistentvolumeclaim "{name_of(pvc)}" is being deleted'
        if use.ephemeral:
            owner_error = ephemeral_owner_error(pod, pvc)
            if owner_error is not None:
                return owner_error
    return None


def classify_claims(
    pod: Pod, handle: Handle, pvc_cache: AssumeCache, pv_cache: AssumeCache
) -> PodVolumeClaims | str:
    """The pod's claims by binding state (through the assumed view), or an error text."""
    bound: list[RawObject] = []
    delayed: list[RawObject] = []
    immediate: list[RawObject] = []
    classes = handle.lister(STORAGE_CLASSES)
    for use in pod_claims(pod):
        pvc = pvc_cache.get((pod.namespace, use.claim_name))
        if pvc is None:
            return f'error getting PVC "{pod.namespace}/{use.claim_name}": not found'
        if is_fully_bound(pvc):
            bound.append(pvc)
            continue
        class_name = storage_class_of(pvc)
        storage_class = classes.get("", class_name) if class_name else None
        delay = storage_class is not None and is_wait_for_first_consumer(storage_class)
        if delay and not spec_of(pvc).get("volumeName"):
            delayed.append(pvc)
        else:
            # Immediate claims, and claims pre-bound to a volume, are the PV controller's job.
            immediate.append(pvc)
    volumes_by_class: dict[str, list[RawObject]] = {}
    if delayed:
        for pvc in delayed:
            volumes_by_class[storage_class_of(pvc)] = []
        for pv in pv_cache.list():
            same_class = volumes_by_class.get(storage_class_of(pv))
            if same_class is not None:
                same_class.append(pv)
    return PodVolumeClaims(
        tuple(bound),
        tuple(delayed),
        tuple(immediate),
        {name: tuple(pvs) for name, pvs in volumes_by_class.items()},
    )
