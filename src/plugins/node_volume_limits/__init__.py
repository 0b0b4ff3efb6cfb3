"""The NodeVolumeLimits filter plugin (CSI attach limits)."""

from plugins.helpers.volumes import CSI_DRIVERS
from plugins.helpers.volumes import CSI_NODES
from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import STORAGE_CLASSES
from plugins.helpers.volumes import VOLUME_ATTACHMENTS
from plugins.node_volume_limits.plugin import REASON_MAX_VOLUME_COUNT
from plugins.node_volume_limits.plugin import NodeVolumeLimits
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name="NodeVolumeLimits",
    plugin_class=NodeVolumeLimits,
    watches=(PVCS, PVS, STORAGE_CLASSES, CSI_NODES, CSI_DRIVERS, VOLUME_ATTACHMENTS),
)

__all__ = [
    "REASON_MAX_VOLUME_COUNT",
    "SPEC",
    "NodeVolumeLimits",
]
