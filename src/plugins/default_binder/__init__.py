"""The DefaultBinder bind plugin."""

from plugins.default_binder.plugin import DefaultBinder
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="DefaultBinder", plugin_class=DefaultBinder, args_model=None)

__all__ = ["SPEC", "DefaultBinder"]
