"""The VolumeBinding plugin: PreFilter, Filter, Reserve, PreBind."""

from plugins.helpers.volumes import CSI_DRIVERS
from plugins.helpers.volumes import CSI_NODES
from plugins.helpers.volumes import CSI_STORAGE_CAPACITIES
from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import STORAGE_CLASSES
from plugins.volume_binding.args import DEFAULT_BIND_TIMEOUT_SECONDS
from plugins.volume_binding.args import VolumeBindingArgs
from plugins.volume_binding.binder import REASON_BIND_CONFLICT
from plugins.volume_binding.binder import REASON_NODE_CONFLICT
from plugins.volume_binding.binder import REASON_NOT_ENOUGH_SPACE
from plugins.volume_binding.binder import REASON_PV_NOT_EXIST
from plugins.volume_binding.plugin import REASON_UNBOUND_IMMEDIATE
from plugins.volume_binding.plugin import VolumeBinding
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
