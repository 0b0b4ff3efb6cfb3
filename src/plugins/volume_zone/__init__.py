"""The VolumeZone filter plugin."""

from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import STORAGE_CLASSES
from plugins.volume_zone.plugin import REASON_CONFLICT
from plugins.volume_zone.plugin import VolumeZone
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="VolumeZone", plugin_class=VolumeZone, watches=(PVCS, PVS, STORAGE_CLASSES))

__all__ = ["REASON_CONFLICT", "SPEC", "VolumeZone"]
