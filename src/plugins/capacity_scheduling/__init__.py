"""The CapacityScheduling plugin: elastic quotas per namespace, with borrowing and reclaim."""

from plugins.capacity_scheduling.plugin import CapacityScheduling
from plugins.capacity_scheduling.quota import ELASTIC_QUOTA_RESOURCE
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=CapacityScheduling.name,
    plugin_class=CapacityScheduling,
    args_model=None,
    watches=(ELASTIC_QUOTA_RESOURCE,),
)

__all__ = ["SPEC", "CapacityScheduling"]
