"""NodeResourcesFit: the in-tree resource fit filter and resource scoring plugin."""

from plugins.helpers.extended_resources import DEVICE_CLASSES
from plugins.node_resources_fit.args import NodeResourcesFitArgs
from plugins.node_resources_fit.plugin import NodeResourcesFit
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=NodeResourcesFit.name,
    plugin_class=NodeResourcesFit,
    args_model=NodeResourcesFitArgs,
    # Extended resources that DeviceClasses provide are left to DynamicResources.
    watches=(DEVICE_CLASSES,),
)

__all__ = ["SPEC", "NodeResourcesFit", "NodeResourcesFitArgs"]
