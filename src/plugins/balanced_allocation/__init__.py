"""NodeResourcesBalancedAllocation: the in-tree resource balance scoring plugin."""

from plugins.balanced_allocation.args import NodeResourcesBalancedAllocationArgs
from plugins.balanced_allocation.plugin import NodeResourcesBalancedAllocation
from plugins.helpers.extended_resources import DEVICE_CLASSES
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=NodeResourcesBalancedAllocation.name,
    plugin_class=NodeResourcesBalancedAllocation,
    args_model=NodeResourcesBalancedAllocationArgs,
    # Pods asking for an extended resource that a DeviceClass provides are not signed.
    watches=(DEVICE_CLASSES,),
)

__all__ = ["SPEC", "NodeResourcesBalancedAllocation", "NodeResourcesBalancedAllocationArgs"]
