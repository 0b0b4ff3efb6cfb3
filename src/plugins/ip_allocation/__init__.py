"""The IPAllocation plugin: an address from an IPPool for each annotated pod, written to the
pool and the pod before the pod is bound."""

from plugins.ip_allocation.annotations import ADDRESS
from plugins.ip_allocation.annotations import NETWORK
from plugins.ip_allocation.annotations import POOL
from plugins.ip_allocation.args import IPAllocationArgs
from plugins.ip_allocation.plugin import IPAllocation
from plugins.ip_allocation.pool import IP_POOLS
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=IPAllocation.name,
    plugin_class=IPAllocation,
    args_model=IPAllocationArgs,
    watches=(IP_POOLS,),
)

__all__ = ["ADDRESS", "NETWORK", "POOL", "SPEC", "IPAllocation", "IPAllocationArgs"]
