"""The Coscheduling plugin: gang scheduling with PodGroups of every dialect."""

from plugins.coscheduling.args import CoschedulingArgs
from plugins.coscheduling.dialects import POD_GROUP_RESOURCES
from plugins.coscheduling.plugin import Coscheduling
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=Coscheduling.name,
    plugin_class=Coscheduling,
    args_model=CoschedulingArgs,
    watches=POD_GROUP_RESOURCES,
)

__all__ = ["SPEC", "Coscheduling", "CoschedulingArgs"]
