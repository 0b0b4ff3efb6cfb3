"""Where a pod's data lives: the volumes its claims are bound to, and the locations its
annotation names. Each site carries the data's size in bytes as its weight."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import labels_of
from plugins.helpers.volumes import pod_claims
from plugins.helpers.volumes import volume_capacity
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.objects.node_selector import NodeSelector
from scheduler.objects.node_selector import parse_node_selector
from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import int_value
from scheduler.objects.raw import spec_of

LOCATIONS_ANNOTATION = "data-locality.kube-pyscheduler.io/locations"
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
HOSTNAME_LABEL = "kubernetes.io/hostname"
# A volume that states no capacity still counts, as one byte's worth, rather than not at all.
UNKNOWN_SIZE = 1


class Level(IntEnum):
    """How precisely a site is placed; a node matching at the site's own level is at the data."""

    REGION = 1
    ZONE = 2
    HOST = 3


LEVEL_LABELS = {Level.REGION: REGION_LABEL, Level.ZONE: ZONE_LABEL, Level.HOST: HOSTNAME_LABEL}
_ANNOTATION_KEYS = {"region": Level.REGION, "zone": Level.ZONE, "hostname": Level.HOST}


@dataclass(frozen=True, slots=True)
class Site:
    """Data at a place: `level` is the most precise label known, `labels` the known labels
    (hostname, zone, region as far as known), or `selector` for a volume pinned by node
    affinity (whose nodes are the data's hosts)."""

    weight: int
    level: Level
    labels: Mapping[str, str]
    selector: NodeSelector | None = None


class LocationsError(ValueError):
    """The locations annotation cannot be read; the message names the entry and field."""


def _size(value: Any, where: str) -> int:
    if value is None:
        return UNKNOWN_SIZE
    try:
        size = int_value(value)
    except (QuantityError, ValueError, TypeError) as exc:
        raise LocationsError(f"{where}.size: not a quantity: {value!r}") from exc
    if size < 0:
        raise LocationsError(f"{where}.size: must not be negative, got {value!r}")
    return size


def annotated_sites(pod: Pod) -> list[Site]:
    """The sites of the pod's locations annotation: a JSON list of objects, each with exactly
    one of `hostname`, `zone` or `region` and an optional `size` (a quantity, e.g. "20Gi")."""
    text = pod.annotations.get(LOCATIONS_ANNOTATION)
    if text is None:
        return []
    where = f"annotation {LOCATIONS_ANNOTATION}"
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LocationsError(f"{where}: not JSON: {exc.msg}") from exc
    if not isinstance(entries, list):
        raise LocationsError(f"{where}: must be a JSON list of locations")
    sites = []
    for index, entry in enumerate(entries):
        here = f"{where}[{index}]"
        if not isinstance(entry, dict):
            raise LocationsError(f"{here}: must be an object")
        unknown = sorted(set(entry) - {*_ANNOTATION_KEYS, "size"})
        if unknown:
            raise LocationsError(f"{here}: unknown field {unknown[0]!r}")
        places = [key for key in _ANNOTATION_KEYS if key in entry]
        if len(places) != 1:
            raise LocationsError(f"{here}: needs exactly one of hostname, zone, region")
        key = places[0]
        value = entry[key]
        if not isinstance(value, str) or not value:
            raise LocationsError(f"{here}.{key}: must be a non-empty string")
        level = _ANNOTATION_KEYS[key]
        sites.append(Site(_size(entry.get("size"), here), level, {LEVEL_LABELS[level]: value}))
    return sites


def volume_sites(pod: Pod, handle: Handle) -> list[Site]:
    """A site per bound claim of the pod whose volume says where it is (labels or affinity).
    Unbound claims and volumes with no topology say nothing about locality and are left out."""
    claims = handle.lister(PVCS)
    volumes = handle.lister(PVS)
    sites = []
    seen: set[str] = set()
    for use in pod_claims(pod):
        if use.claim_name in seen:
            continue
        seen.add(use.claim_name)
        pvc = claims.get(pod.namespace, use.claim_name)
        volume_name = spec_of(pvc).get("volumeName") if pvc is not None else None
        pv = volumes.get("", str(volume_name)) if volume_name else None
        if pv is None:
            continue
        site = _volume_site(pv)
        if site is not None:
            sites.append(site)
    return sites


def _volume_site(pv: Mapping[str, Any]) -> Site | None:
    weight = volume_capacity(pv) or UNKNOWN_SIZE
    required = (spec_of(pv).get("nodeAffinity") or {}).get("required")
    if required is not None:
        try:
            selector = parse_node_selector(required)
        except (ValueError, TypeError, AttributeError):
            selector = None
        if selector is not None:
            return Site(weight, Level.HOST, {}, selector)
    labels = labels_of(pv)
    known = {key: labels[key] for key in (ZONE_LABEL, REGION_LABEL) if key in labels}
    if ZONE_LABEL in known:
        return Site(weight, Level.ZONE, known)
    if REGION_LABEL in known:
        return Site(weight, Level.REGION, known)
    return None
