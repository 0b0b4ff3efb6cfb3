"""The CapacityScheduling plugin: elastic quotas per namespace, with borrowing and reclaim."""

from plugins.capacity_scheduling.plugin import CapacityScheduling
from plugins.capacity_scheduling.quota import ELASTIC_QUOTA_RESOURCE
from plugins.helpers.preemption import PDB_RESOURCE
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=CapacityScheduling.name,
    plugin_class=CapacityScheduling,
    args_model=None,
    # Its preemption weighs PodDisruptionBudgets, as DefaultPreemption's does.
    watches=(ELASTIC_QUOTA_RESOURCE, PDB_RESOURCE),
)

__all__ = ["SPEC", "CapacityScheduling"]
