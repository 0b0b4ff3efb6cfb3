"""With no configuration, the default profile is upstream's default plugin set, in upstream's
order, with upstream's weights and args."""

from __future__ import annotations

from scheduler.config import default_config
from scheduler.runtime.discovery import PluginRegistry

EXPECTED = {
    "PreEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
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
        "DynamicResources",
        "NodeDeclaredFeatures",
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
        "DynamicResources",
        "NodeDeclaredFeatures",
    ],
    "PostFilter": ["DynamicResources", "DefaultPreemption"],
    # VolumeBinding implements PreScore and Score whatever the gates; its PreScore skips
    # Score unless StorageCapacityScoring is on.
    "PreScore": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ],
    "Score": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ],
    "Reserve": ["VolumeBinding", "DynamicResources"],
    "Permit": [],
    "PreBind": ["VolumeBinding", "DynamicResources"],
    "Bind": ["DefaultBinder"],
    "PostBind": [],
}
WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "VolumeBinding": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "DynamicResources": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}


def test_default_profile_matches_upstream() -> None:
    config, (profile,) = default_config(PluginRegistry.discover())
    assert profile.scheduler_name == "default-scheduler"
    assert {point: [r.name for r in refs] for point, refs in profile.plugins.items()} == EXPECTED
    assert {r.name: r.weight for r in profile.plugins["Score"]} == WEIGHTS
    assert config.percentage_of_nodes_to_score in (0, None)


def test_effective_dynamic_resources_args_are_upstreams() -> None:
    config, _ = default_config(PluginRegistry.discover())
    [profile] = config.profiles
    [entry] = [e for e in profile.plugin_config if e.name == "DynamicResources"]
    # What kube-scheduler v1.36.3 --write-config-to prints for the default profile.
    assert entry.args == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "DynamicResourcesArgs",
        "bindingTimeout": "10m0s",
        "filterTimeout": "10s",
    }
