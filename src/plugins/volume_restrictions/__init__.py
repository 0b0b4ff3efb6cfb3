"""The VolumeRestrictions filter plugin."""

from plugins.helpers.volumes import PVCS
from plugins.volume_restrictions.plugin import REASON_DISK_CONFLICT
from plugins.volume_restrictions.plugin import REASON_READ_WRITE_ONCE_POD_CONFLICT
from plugins.volume_restrictions.plugin import VolumeRestrictions
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="VolumeRestrictions", plugin_class=VolumeRestrictions, watches=(PVCS,))

__all__ = [
    "REASON_DISK_CONFLICT",
    "REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "SPEC",
    "VolumeRestrictions",
]
