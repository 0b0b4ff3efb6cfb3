"""Defaults that depend on the plugin registry or on other fields: profiles and plugins."""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.config.models import KubeSchedulerProfile
from scheduler.config.models import Plugin
from scheduler.config.models import Plugins
from scheduler.config.models import PluginSet
from scheduler.framework.spec import PluginSpec

DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Upstream's default plugins (v1.36), all enabled through multiPoint, in upstream
# order, with the Score weights upstream gives them (None: not a Score plugin by default).
UPSTREAM_DEFAULT_PLUGINS: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    # Added in v1.35 behind NodeDeclaredFeatures, which v1.36 turns on by default.
    ("NodeDeclaredFeatures", None),
)


def default_plugins(registry: Mapping[str, PluginSpec]) -> Plugins:
    """The default plugin sets: upstream's default list restricted to registered plugins.

    Not every upstream default plugin is implemented yet, so the defaults are the ones the
    registry holds, kept in upstream order; the set grows as plugins are added.
    """
    enabled = [
        Plugin(name=name, weight=weight)
        for name, weight in UPSTREAM_DEFAULT_PLUGINS
        if name in registry
    ]
    return Plugins(multi_point=PluginSet(enabled=enabled))


def default_profiles(profiles: list[KubeSchedulerProfile]) -> list[KubeSchedulerProfile]:
    """No profile means one default profile; a lone profile without a name gets the default."""
    if not profiles:
        profiles = [KubeSchedulerProfile()]
    if len(profiles) == 1 and profiles[0].scheduler_name is None:
        profiles = [profiles[0].model_copy(update={"scheduler_name": DEFAULT_SCHEDULER_NAME})]
    return profiles
