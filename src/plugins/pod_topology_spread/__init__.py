"""PodTopologySpread: hard and soft topology spread constraints, with cluster defaults."""

from plugins.pod_topology_spread.args import DefaultConstraint
from plugins.pod_topology_spread.args import PodTopologySpreadArgs
from plugins.pod_topology_spread.default_selector import WATCHED_RESOURCES
from plugins.pod_topology_spread.filtering import CONSTRAINTS_NOT_MATCH
from plugins.pod_topology_spread.filtering import NODE_LABEL_NOT_MATCH
from plugins.pod_topology_spread.plugin import NAME
from plugins.pod_topology_spread.plugin import PodTopologySpread
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=NAME,
    plugin_class=PodTopologySpread,
    args_model=PodTopologySpreadArgs,
    watches=WATCHED_RESOURCES,
)

__all__ = [
    "CONSTRAINTS_NOT_MATCH",
    "NAME",
    "NODE_LABEL_NOT_MATCH",
    "SPEC",
    "DefaultConstraint",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
]
