"""Which nodes a set of pools serves, for Filter: per node, and over the rows of the table."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from plugins.ip_allocation.pool import ZONE_LABEL
from plugins.ip_allocation.pool import IPPool
from scheduler.framework import NodeTable
from scheduler.framework import Rows


@dataclass(frozen=True, slots=True)
class Reach:
    """Every node, or the nodes named, in the zones named, or (node, zone) pairs: a pool bound
    to both a node and a zone serves that node only while the node is in that zone."""

    everywhere: bool
    node_names: frozenset[str]
    zones: frozenset[str]
    pairs: frozenset[tuple[str, str]]

    @classmethod
    def of(cls, pools: Iterable[IPPool]) -> Reach:
        pools = list(pools)
        return cls(
            everywhere=any(not p.node_name and not p.zone for p in pools),
            node_names=frozenset(p.node_name for p in pools if p.node_name and not p.zone),
            zones=frozenset(p.zone for p in pools if p.zone and not p.node_name),
            pairs=frozenset((p.node_name, p.zone) for p in pools if p.node_name and p.zone),
        )

    def serves(self, node_name: str, node_labels: Mapping[str, str]) -> bool:
        zone = node_labels.get(ZONE_LABEL, "")
        return (
            self.everywhere
            or node_name in self.node_names
            or zone in self.zones
            or (node_name, zone) in self.pairs
        )

    def served_rows(self, table: NodeTable, rows: Rows) -> npt.NDArray[np.bool_]:
        """`serves` for each of `rows`, at once."""
        if self.everywhere:
            return np.ones(len(rows), dtype=np.bool_)
        served = np.zeros(table.size, dtype=np.bool_)
        zone_ids, zones = table.label_ids(ZONE_LABEL)
        wanted = [zones.index(z) for z in self.zones if z in zones]
        if wanted:
            served |= np.isin(zone_ids, wanted)
        for name in self.node_names:
            row = table.row_of(name)
            if row is not None:
                served[row] = True
        for name, zone in self.pairs:
            row = table.row_of(name)
            if row is not None and zone in zones and zone_ids[row] == zones.index(zone):
                served[row] = True
        picked: npt.NDArray[np.bool_] = served[rows]
        return picked
