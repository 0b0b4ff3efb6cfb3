"""The GPUAware score plugin: GPU utilisation and free GPU memory from the DCGM exporter."""

from plugins.gpu_aware.args import GPUAwareArgs
from plugins.gpu_aware.args import Strategy
from plugins.gpu_aware.plugin import GPUAware
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name=GPUAware.name, plugin_class=GPUAware, args_model=GPUAwareArgs)

__all__ = ["SPEC", "GPUAware", "GPUAwareArgs", "Strategy"]
