"""InterPodAffinity: required pod affinity/anti-affinity in Filter, preferred terms in Score."""

from plugins.inter_pod_affinity.args import InterPodAffinityArgs
from plugins.inter_pod_affinity.filter import AFFINITY_RULES_NOT_MATCH
from plugins.inter_pod_affinity.filter import ANTI_AFFINITY_RULES_NOT_MATCH
from plugins.inter_pod_affinity.filter import EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
from plugins.inter_pod_affinity.plugin import NAME
from plugins.inter_pod_affinity.plugin import InterPodAffinity
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=NAME,
    plugin_class=InterPodAffinity,
    args_model=InterPodAffinityArgs,
    watches=("namespaces",),
)

__all__ = [
    "AFFINITY_RULES_NOT_MATCH",
    "ANTI_AFFINITY_RULES_NOT_MATCH",
    "EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "SPEC",
    "InterPodAffinity",
    "InterPodAffinityArgs",
]
