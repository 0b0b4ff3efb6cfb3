"""Pods placed since the node's load was last measured, which the measurement cannot show yet.

Without them every pod scheduled between two refreshes would see the same idle node and pile
onto it. A pod counts against a node from Reserve until `reporting_interval` after the newest
measurement that could have missed it: a measurement fetched at t reflects samples scraped
before t, and a new pod's load reaches them only after it starts and the exporter reports.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scheduler.framework import NodeTable
from scheduler.framework import Rows

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Placement:
    node: str
    at: float
    cpu_millis: float
    memory_bytes: float


class RecentPlacements:
    def __init__(self, reporting_interval: float, keep_for: float) -> None:
        self._interval = reporting_interval
        self._keep_for = keep_for
        self._by_uid: dict[str, Placement] = {}

    def add(self, uid: str, placement: Placement) -> None:
        self._by_uid[uid] = placement
        self._forget_before(placement.at - self._keep_for)

    def remove(self, uid: str) -> None:
        self._by_uid.pop(uid, None)

    def __len__(self) -> int:
        return len(self._by_uid)

    def _forget_before(self, oldest: float) -> None:
        for uid in [u for u, p in self._by_uid.items() if p.at < oldest]:
            del self._by_uid[uid]

    def _counts(self, placement: Placement, observed_at: float) -> bool:
        return placement.at >= observed_at - self._interval

    def on_node(self, node: str, observed_at: float) -> tuple[float, float]:
        """(CPU millicores, memory bytes) of the placements the node's measurement misses."""
        cpu = memory = 0.0
        for placement in self._by_uid.values():
            if placement.node == node and self._counts(placement, observed_at):
                cpu += placement.cpu_millis
                memory += placement.memory_bytes
        return cpu, memory

    def on_rows(self, table: NodeTable, rows: Rows, observed_at: Floats) -> tuple[Floats, Floats]:
        """`on_node` for each of `rows`, given each row's measurement time (aligned to rows)."""
        cpu = np.zeros(len(rows), dtype=np.float64)
        memory = np.zeros(len(rows), dtype=np.float64)
        if not self._by_uid:
            return cpu, memory
        position = {int(row): i for i, row in enumerate(rows)}
        for placement in self._by_uid.values():
            row = table.row_of(placement.node)
            i = position.get(row) if row is not None else None
            if i is not None and self._counts(placement, float(observed_at[i])):
                cpu[i] += placement.cpu_millis
                memory[i] += placement.memory_bytes
        return cpu, memory
