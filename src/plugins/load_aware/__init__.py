"""The LoadAware score plugin: TargetLoadPacking or LoadVariationRiskBalancing from Prometheus."""

from plugins.load_aware.args import LoadAwareArgs
from plugins.load_aware.args import Mode
from plugins.load_aware.plugin import LoadAware
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name=LoadAware.name, plugin_class=LoadAware, args_model=LoadAwareArgs)

__all__ = ["SPEC", "LoadAware", "LoadAwareArgs", "Mode"]
