"""How near each node of the table is to a pod's data, as a score in [0, 100] per row.

A node at a site (its host, or in its zone or region for data placed only that precisely)
earns the site's whole weight; a node sharing a zone with the site earns `zone_credit` of it,
one sharing only a region `region_credit`. Zones and regions of a site are those it states
and those of the nodes at it, so a hostname also lends its zone and region to its neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from plugins.data_locality.sites import LEVEL_LABELS
from plugins.data_locality.sites import REGION_LABEL
from plugins.data_locality.sites import ZONE_LABEL
from plugins.data_locality.sites import Site
from plugins.helpers import match_node_selector
from scheduler.framework import MAX_NODE_SCORE
from scheduler.framework import NodeTable

Floats = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _rows_with(table: NodeTable, key: str, value: str) -> BoolArray:
    ids, values = table.label_ids(key)
    if value not in values:
        return np.zeros(table.size, dtype=np.bool_)
    return np.asarray(ids == values.index(value), dtype=np.bool_)


def _sharing(table: NodeTable, key: str, anchors: BoolArray, stated: str | None) -> BoolArray:
    """Rows whose `key` label equals that of some anchor row, or the stated value."""
    ids, values = table.label_ids(key)
    shared = {int(i) for i in np.unique(ids[anchors]) if i >= 0}
    if stated is not None and stated in values:
        shared.add(values.index(stated))
    if not shared:
        return np.zeros(table.size, dtype=np.bool_)
    return np.isin(ids, sorted(shared))


def _anchors(table: NodeTable, site: Site) -> BoolArray:
    if site.selector is not None:
        return np.asarray(match_node_selector(table, site.selector), dtype=np.bool_)
    key = LEVEL_LABELS[site.level]
    value = site.labels.get(key)
    if value is None:
        return np.zeros(table.size, dtype=np.bool_)
    return _rows_with(table, key, value)


def site_credit(table: NodeTable, site: Site, zone_credit: float, region_credit: float) -> Floats:
    """The share of `site`'s weight each row earns."""
    anchors = _anchors(table, site)
    same_zone = _sharing(table, ZONE_LABEL, anchors, site.labels.get(ZONE_LABEL))
    same_region = _sharing(table, REGION_LABEL, anchors, site.labels.get(REGION_LABEL))
    credit = np.where(same_region, region_credit, 0.0)
    credit = np.where(same_zone, zone_credit, credit)
    return np.where(anchors, 1.0, credit)


def nearness_scores(
    table: NodeTable, sites: Sequence[Site], zone_credit: float, region_credit: float
) -> npt.NDArray[np.int64]:
    """Per table row: the weighted share of the pod's data the node is near, times 100."""
    total = float(sum(site.weight for site in sites))
    earned = np.zeros(table.size, dtype=np.float64)
    if total <= 0:
        return earned.astype(np.int64)
    for site in sites:
        earned += site.weight * site_credit(table, site, zone_credit, region_credit)
    scores = np.floor(earned * MAX_NODE_SCORE / total + 1e-9)
    return np.clip(scores, 0, MAX_NODE_SCORE).astype(np.int64)
