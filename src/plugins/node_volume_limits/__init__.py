"""The NodeVolumeLimits filter plugin (CSI attach limits)."""

from plugins.helpers.volumes import CSI_NODES
from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import STORAGE_CLASSES
from plugins.node_volume_limits.limits import attach_limit_key
from plugins.node_volume_limits.limits import node_volume_limits
from plugins.node_volume_limits.plugin import REASON_MAX_VOLUME_COUNT
from plugins.node_volume_limits.plugin import NodeVolumeLimits
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name="NodeVolumeLimits",
    plugin_class=NodeVolumeLimits,
    watches=(PVCS, PVS, STORAGE_CLASSES, CSI_NODES),
)

__all__ = [
    "REASON_MAX_VOLUME_COUNT",
    "SPEC",
    "NodeVolumeLimits",
    "attach_limit_key",
    "node_volume_limits",
]
