"""The PrioritySort queue-sort plugin."""

from plugins.priority_sort.plugin import PrioritySort
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="PrioritySort", plugin_class=PrioritySort, args_model=None)

__all__ = ["SPEC", "PrioritySort"]
