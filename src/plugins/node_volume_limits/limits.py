"""What a node's CSINode says of each CSI driver: which drivers are installed there, and how
many volumes of each it can have attached (`spec.drivers[].allocatable.count`).

Since v1.36 the CSINode is the only source of limits, as upstream: a node's
`attachable-volumes-*` allocatable resources no longer limit anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def csi_node_counts(csi_node: Mapping[str, Any] | None) -> dict[str, int]:
    """Driver name -> allocatable count, for the drivers of a CSINode that declare one."""
    if csi_node is None:
        return {}
    counts: dict[str, int] = {}
    for driver in _drivers(csi_node):
        count = (driver.get("allocatable") or {}).get("count")
        if count is not None:
            counts[str(driver.get("name") or "")] = int(count)
    return counts


def installed_drivers(csi_node: Mapping[str, Any] | None) -> frozenset[str]:
    """The drivers a CSINode lists, with a limit or without."""
    if csi_node is None:
        return frozenset()
    return frozenset(str(d.get("name") or "") for d in _drivers(csi_node))


def _drivers(csi_node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((csi_node.get("spec") or {}).get("drivers") or ())
