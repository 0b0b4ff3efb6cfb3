"""Bound in-tree PVs as a node migrated to CSI sees them.

On a node whose CSINode names a PV's in-tree plugin among its migrated ones, the volume is
handled by the plugin's CSI driver, which labels the node with its own zone key. Upstream's
binder (tryTranslatePVToCSI) therefore checks the node affinity of the PV translated to CSI,
where the zone affinity speaks that key, both in Filter and when PreBind checks the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugins.helpers import csi_migration
from plugins.helpers.volumes import CSI_NODES
from scheduler.framework import Handle
from scheduler.objects.raw import RawObject


class MigrationError(Exception):
    """A bound PV the CSI translator refuses: an error of the attempt, not a node's
    shortcoming. The message is upstream's."""


def csi_node_of(handle: Handle, node_name: str) -> RawObject | None:
    """The node's CSINode; None when it has none (no plugin counts as migrated there)."""
    return handle.lister(CSI_NODES).get("", node_name)


def pv_seen_from(pv: RawObject, csi_node: Mapping[str, Any] | None) -> RawObject:
    """The PV translated to CSI when its plugin is migrated on the node of `csi_node`, else the
    PV as it is. Raises MigrationError when the translation fails."""
    plugin = csi_migration.pv_plugin(pv)
    if plugin is None or not csi_migration.migrated_on_node(csi_node, plugin):
        return pv
    try:
        return csi_migration.translate_pv_to_csi(pv)
    except csi_migration.TranslationError as exc:
        raise MigrationError(f"could not translate pv: {exc}") from None
