"""The SchedulingGates pre-enqueue plugin."""

from plugins.scheduling_gates.plugin import SchedulingGates
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="SchedulingGates", plugin_class=SchedulingGates, args_model=None)

__all__ = ["SPEC", "SchedulingGates"]
