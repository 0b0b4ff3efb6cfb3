"""NodeResourcesBalancedAllocation: the in-tree resource balance scoring plugin."""

from plugins.balanced_allocation.args import NodeResourcesBalancedAllocationArgs
from plugins.balanced_allocation.plugin import NodeResourcesBalancedAllocation
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=NodeResourcesBalancedAllocation.name,
    plugin_class=NodeResourcesBalancedAllocation,
    args_model=NodeResourcesBalancedAllocationArgs,
)

__all__ = ["SPEC", "NodeResourcesBalancedAllocation", "NodeResourcesBalancedAllocationArgs"]
