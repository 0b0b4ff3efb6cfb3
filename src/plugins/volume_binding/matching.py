"""Choosing a pre-provisioned PV for an unbound claim (upstream's FindMatchingVolume).

A PV qualifies when it is not claimed by another claim, is large enough, has the claim's volume
mode, is not being deleted, is Available, matches the claim's selector and class, can be used
from the node and offers every access mode the claim asks for. The smallest such PV wins; a PV
pre-bound to this very claim is taken whatever its size, if the node can use it.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping

from plugins.helpers.volumes import access_modes
from plugins.helpers.volumes import labels_of
from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import namespace_of
from plugins.helpers.volumes import pv_node_affinity_matches
from plugins.helpers.volumes import requested_storage
from plugins.helpers.volumes import volume_capacity
from plugins.helpers.volumes import volume_mode
from scheduler.objects.labels import SelectorError
from scheduler.objects.labels import parse_label_selector
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import spec_of
from scheduler.objects.raw import storage_class_of


def claim_ref_of(pv: RawObject) -> RawObject | None:
    claim_ref: RawObject | None = spec_of(pv).get("claimRef")
    return claim_ref


def is_bound_to_claim(pv: RawObject, pvc: RawObject) -> bool:
    """The PV's claimRef names the claim (and, if it records one, the claim's uid)."""
    ref = claim_ref_of(pv)
    if ref is None:
        return False
    if ref.get("name") != name_of(pvc) or (ref.get("namespace") or "") != namespace_of(pvc):
        return False
    uid = ref.get("uid") or ""
    return not uid or uid == ((pvc.get("metadata") or {}).get("uid") or "")


def find_matching_volume(
    pvc: RawObject,
    pvs: Iterable[RawObject],
    node_labels: Mapping[str, str],
    excluded: Collection[str],
) -> RawObject | None:
    requested = requested_storage(pvc) or 0
    requested_class = storage_class_of(pvc)
    try:
        selector = parse_label_selector(spec_of(pvc).get("selector"))
    except SelectorError:
        return None
    smallest: RawObject | None = None
    for pv in pvs:
        if name_of(pv) in excluded:
            continue
        if claim_ref_of(pv) is not None and not is_bound_to_claim(pv, pvc):
            continue
        capacity = volume_capacity(pv)
        if capacity < requested or volume_mode(pv) != volume_mode(pvc):
            continue
        if _attributes_class(pv) != _attributes_class(pvc):
            # VolumeAttributesClass (GA, locked on): a volume carries the class it was made
            # with, and only a claim asking for that class (or, both unset, none) may have it.
            continue
        if (pv.get("metadata") or {}).get("deletionTimestamp"):
            continue
        usable = pv_node_affinity_matches(pv, node_labels)
        if is_bound_to_claim(pv, pvc):
            # Pre-bound by the user: this PV or nothing.
            return pv if usable else None
        if (pv.get("status") or {}).get("phase") != "Available":
            # Not yet Available: binding it now would likely conflict with the PV controller.
            continue
        if selector is not None and not selector.matches(labels_of(pv)):
            continue
        if storage_class_of(pv) != requested_class or not usable:
            continue
        if not access_modes(pvc) <= access_modes(pv):
            continue
        if smallest is None or volume_capacity(smallest) > capacity:
            smallest = pv
    return smallest


def _attributes_class(obj: RawObject) -> str:
    return str(spec_of(obj).get("volumeAttributesClassName") or "")
