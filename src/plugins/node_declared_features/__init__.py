"""The NodeDeclaredFeatures filter plugin (kube-scheduler v1.36's default profile)."""

from plugins.node_declared_features.plugin import REASON
from plugins.node_declared_features.plugin import NodeDeclaredFeatures
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="NodeDeclaredFeatures", plugin_class=NodeDeclaredFeatures, args_model=None)

__all__ = ["REASON", "SPEC", "NodeDeclaredFeatures"]
