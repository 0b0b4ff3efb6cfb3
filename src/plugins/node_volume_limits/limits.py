"""How many volumes of each CSI driver a node can have attached.

Limits are keyed like node resources: `attachable-volumes-csi-<driver>`. A CSINode's
`spec.drivers[].allocatable.count` sets the limit of its driver; limits a node still publishes
as `attachable-volumes-*` allocatable resources apply too, CSINode winning where both exist.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from scheduler.framework import Node

ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
# Resource names are limited to 63 characters; longer keys are shortened with a hash.
_RESOURCE_NAME_LENGTH_LIMIT = 63
_DRIVER_CHARS_KEPT = 23
_HASH_CHARS_KEPT = 16


def attach_limit_key(driver: str) -> str:
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode(), usedforsecurity=False).hexdigest()
        return CSI_ATTACH_LIMIT_PREFIX + driver[:_DRIVER_CHARS_KEPT] + digest[:_HASH_CHARS_KEPT]
    return CSI_ATTACH_LIMIT_PREFIX + driver


def csi_node_counts(csi_node: Mapping[str, Any] | None) -> dict[str, int]:
    """Driver name -> allocatable count, for the drivers of a CSINode that declare one."""
    if csi_node is None:
        return {}
    counts: dict[str, int] = {}
    for driver in (csi_node.get("spec") or {}).get("drivers") or ():
        count = (driver.get("allocatable") or {}).get("count")
        if count is not None:
            counts[str(driver.get("name") or "")] = int(count)
    return counts


def node_volume_limits(node: Node, csi_node: Mapping[str, Any] | None) -> dict[str, int]:
    """Limit key -> the most volumes of that kind the node may have attached."""
    limits = {
        name: value
        for name, value in node.allocatable.items()
        if name.startswith(ATTACHABLE_VOLUMES_PREFIX)
    }
    for driver, count in csi_node_counts(csi_node).items():
        limits[attach_limit_key(driver)] = count
    return limits
