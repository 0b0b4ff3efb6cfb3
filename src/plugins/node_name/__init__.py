"""The NodeName filter plugin."""

from plugins.node_name.plugin import REASON
from plugins.node_name.plugin import NodeName
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="NodeName", plugin_class=NodeName, args_model=None)

__all__ = ["REASON", "SPEC", "NodeName"]
