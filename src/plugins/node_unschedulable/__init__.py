"""The NodeUnschedulable filter plugin."""

from plugins.node_unschedulable.plugin import REASON
from plugins.node_unschedulable.plugin import NodeUnschedulable
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="NodeUnschedulable", plugin_class=NodeUnschedulable, args_model=None)

__all__ = ["REASON", "SPEC", "NodeUnschedulable"]
