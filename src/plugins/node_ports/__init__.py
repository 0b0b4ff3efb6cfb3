"""The NodePorts filter plugin."""

from plugins.node_ports.plugin import REASON
from plugins.node_ports.plugin import NodePorts
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="NodePorts", plugin_class=NodePorts, args_model=None)

__all__ = ["REASON", "SPEC", "NodePorts"]
