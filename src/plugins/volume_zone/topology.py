"""Zone and region constraints a pod's bound PersistentVolumes put on nodes.

A PV's topology labels (GA and the legacy failure-domain beta ones) name the zones or regions
it lives in; several zones are joined with "__". A node that carries any topology label must
have, for every such PV label, the same label (or its GA equivalent) with one of the values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler.objects.node import BETA_REGION_LABEL
from scheduler.objects.node import BETA_ZONE_LABEL
from scheduler.objects.node import REGION_LABEL
from scheduler.objects.node import ZONE_LABEL

TOPOLOGY_LABELS = (BETA_ZONE_LABEL, BETA_REGION_LABEL, ZONE_LABEL, REGION_LABEL)
_GA_EQUIVALENT = {BETA_ZONE_LABEL: ZONE_LABEL, BETA_REGION_LABEL: REGION_LABEL}
_MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of one PV: the node's value for `key` must be in `values`."""

    pv_name: str
    key: str
    values: frozenset[str]

    @property
    def ga_key(self) -> str:
        return _GA_EQUIVALENT.get(self.key, self.key)


def zones_of(value: str) -> frozenset[str] | None:
    """The zones of a multi-zone label value, None if it is malformed (an empty zone)."""
    zones = [zone.strip() for zone in value.split(_MULTI_ZONE_DELIMITER)]
    if any(not zone for zone in zones):
        return None
    return frozenset(zones)


def pv_topologies(pv_name: str, pv_labels: Mapping[str, str]) -> list[PVTopology]:
    """The PV's constraints, in label order; a malformed label is ignored."""
    found: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        value = pv_labels.get(key)
        if value is None:
            continue
        zones = zones_of(value)
        if zones is not None:
            found.append(PVTopology(pv_name, key, zones))
    return found


def node_satisfies(topologies: tuple[PVTopology, ...], node_labels: Mapping[str, str]) -> bool:
    if not any(key in node_labels for key in TOPOLOGY_LABELS):
        # A node without topology labels (a single-zone cluster) takes any volume.
        return True
    for topology in topologies:
        value = node_labels.get(topology.key)
        if value is None:
            # A beta PV label is also satisfied by the node's GA label.
            value = node_labels.get(topology.ga_key)
        if value is None or value not in topology.values:
            return False
    return True
