"""The DefaultPreemption post-filter (and pre-enqueue) plugin."""

from plugins.default_preemption.args import DefaultPreemptionArgs
from plugins.default_preemption.plugin import DefaultPreemption
from plugins.helpers.preemption import PDB_RESOURCE
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=DefaultPreemption.name,
    plugin_class=DefaultPreemption,
    args_model=DefaultPreemptionArgs,
    watches=(PDB_RESOURCE,),
)

__all__ = ["SPEC", "DefaultPreemption", "DefaultPreemptionArgs"]
