"""The VolumeBinding plugin: PreFilter, Filter, Reserve, PreBind."""

from plugins.helpers.volumes import (
    CSI_DRIVERS,
    CSI_NODES,
    CSI_STORAGE_CAPACITIES,
    PVCS,
    PVS,
    STORAGE_CLASSES,
)
from plugins.volume_binding.args import DEFAULT_BIND_TIMEOUT_SECONDS, VolumeBindingArgs
from plugins.volume_binding.binder import (
    REASON_BIND_CONFLICT,
    REASON_NODE_CONFLICT,
    REASON_NOT_ENOUGH_SPACE,
    REASON_PV_NOT_EXIST,
)
from plugins.volume_binding.plugin import REASON_UNBOUND_IMMEDIATE, VolumeBinding
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name="VolumeBinding",
    plugin_class=VolumeBinding,
    args_model=VolumeBindingArgs,
    watches=(PVCS, PVS, STORAGE_CLASSES, CSI_NODES, CSI_DRIVERS, CSI_STORAGE_CAPACITIES),
)

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "REASON_BIND_CONFLICT",
    "REASON_NODE_CONFLICT",
    "REASON_NOT_ENOUGH_SPACE",
    "REASON_PV_NOT_EXIST",
    "REASON_UNBOUND_IMMEDIATE",
    "SPEC",
    "VolumeBinding",
    "VolumeBindingArgs",
]
