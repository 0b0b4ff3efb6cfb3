"""With no configuration, the default profile is upstream's default plugin set, in upstream's
order, with upstream's weights (DynamicResources aside, see docs/architecture.md)."""

from __future__ import annotations

from scheduler.config import default_config
from scheduler.runtime.discovery import PluginRegistry

EXPECTED = {
    "PreEnqueue": ["SchedulingGates", "DefaultPreemption"],
    "QueueSort": ["PrioritySort"],
    "PreFilter": [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
    ],
    "Filter": [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
    ],
    "PostFilter": ["DefaultPreemption"],
    "PreScore": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ],
    "Score": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ],
    "Reserve": ["VolumeBinding"],
    "Permit": [],
    "PreBind": ["VolumeBinding"],
    "Bind": ["DefaultBinder"],
    "PostBind": [],
}
WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}


def test_default_profile_matches_upstream() -> None:
    config, (profile,) = default_config(PluginRegistry.discover())
    assert profile.scheduler_name == "default-scheduler"
    assert {point: [r.name for r in refs] for point, refs in profile.plugins.items()} == EXPECTED
    assert {r.name: r.weight for r in profile.plugins["Score"]} == WEIGHTS
    assert "DynamicResources" not in profile.plugin_args
    assert config.percentage_of_nodes_to_score in (0, None)
