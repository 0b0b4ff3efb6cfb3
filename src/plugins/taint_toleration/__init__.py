"""The TaintToleration filter and score plugin."""

from plugins.taint_toleration.plugin import REASON
from plugins.taint_toleration.plugin import TaintToleration
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="TaintToleration", plugin_class=TaintToleration, args_model=None)

__all__ = ["REASON", "SPEC", "TaintToleration"]
