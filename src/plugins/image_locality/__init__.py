"""The ImageLocality score plugin."""

from plugins.image_locality.plugin import ImageLocality
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="ImageLocality", plugin_class=ImageLocality, args_model=None)

__all__ = ["SPEC", "ImageLocality"]
