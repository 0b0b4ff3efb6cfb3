"""EffectiveProfile: what one profile runs, after defaults, merging and multiPoint expansion."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler.config.models import Plugins
from scheduler.config.plugin_sets import EXTENSION_POINTS
from scheduler.config.plugin_sets import PluginRef
from scheduler.config.plugin_sets import expand_extension_point
from scheduler.config.plugin_sets import needed_plugin_names
from scheduler.config.plugin_sets import score_weights
from scheduler.framework.args import GateCheck
from scheduler.framework.args import PluginArgs
from scheduler.framework.spec import PluginSpec


@dataclass(frozen=True)
class EffectiveProfile:
    """A profile ready for the runtime to build its plugin chains from.

    `plugins` has every extension point name as a key, each with its plugins in run order.
    `plugin_args` has the validated args (or None for plugins without args) of every plugin
    the profile instantiates, including multiPoint plugins disabled at all their points, as
    upstream constructs those too. Treat both mappings as read-only.
    """

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Mapping[str, tuple[PluginRef, ...]]
    plugin_args: Mapping[str, PluginArgs | None]


def build_effective_profile(
    scheduler_name: str,
    percentage_of_nodes_to_score: int | None,
    merged: Plugins,
    configured_args: Mapping[str, PluginArgs | None],
    registry: Mapping[str, PluginSpec],
    gates: GateCheck | None = None,
) -> EffectiveProfile:
    """`merged` are the profile's plugin sets folded into the defaults; unknown names skipped.
    Plugins without configured args get their defaults under the feature gates `gates` tells."""
    chains: dict[str, tuple[PluginRef, ...]] = {}
    for point in EXTENSION_POINTS:
        names = expand_extension_point(point, merged, registry)
        weights = score_weights(merged, names) if point == "Score" else dict.fromkeys(names, 0)
        chains[point] = tuple(PluginRef(name, weights[name]) for name in names)
    plugin_args = {
        name: configured_args[name]
        if name in configured_args
        else registry[name].default_args(gates)
        for name in needed_plugin_names(merged)
        if name in registry
    }
    return EffectiveProfile(
        scheduler_name=scheduler_name,
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        plugins=chains,
        plugin_args=plugin_args,
    )
