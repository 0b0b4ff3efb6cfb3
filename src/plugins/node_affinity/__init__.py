"""The NodeAffinity filter and score plugin."""

from plugins.node_affinity.args import NodeAffinityArgs
from plugins.node_affinity.plugin import REASON_CONFLICT
from plugins.node_affinity.plugin import REASON_ENFORCED
from plugins.node_affinity.plugin import REASON_POD
from plugins.node_affinity.plugin import NodeAffinity
from scheduler.framework import PluginSpec

SPEC = PluginSpec(name="NodeAffinity", plugin_class=NodeAffinity, args_model=NodeAffinityArgs)

__all__ = [
    "REASON_CONFLICT",
    "REASON_ENFORCED",
    "REASON_POD",
    "SPEC",
    "NodeAffinity",
    "NodeAffinityArgs",
]
