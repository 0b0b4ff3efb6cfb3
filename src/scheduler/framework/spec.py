"""PluginSpec: how a plugin package describes itself to the scheduler."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scheduler.framework.args import GateCheck
from scheduler.framework.args import PluginArgs
from scheduler.framework.handle import Handle
from scheduler.framework.plugins import Plugin
from scheduler.framework.plugins import implemented_extension_points

PluginFactory = Callable[[Any, Handle], Plugin]


@dataclass(frozen=True, slots=True)
class PluginSpec:
    """A plugin's name, its class (constructed as `plugin_class(args, handle)`) and args model.

    `watches` names extra API resources (plural, e.g. "namespaces") the plugin reads through
    `Handle.lister`, so the scheduler starts informers for them. `gated_watches` are (feature
    gate, resource) pairs: a resource watched only while its kube-scheduler feature gate is on,
    often because the API server serves it only then. While one is not watched, its lister is
    empty.
    """

    name: str
    plugin_class: type
    args_model: type[PluginArgs] | None = None
    watches: tuple[str, ...] = ()
    gated_watches: tuple[tuple[str, str], ...] = ()

    def watched_resources(self, gate_enabled: Callable[[str], bool]) -> tuple[str, ...]:
        """The resources to watch for this plugin under the feature gates `gate_enabled` tells."""
        gated = tuple(resource for gate, resource in self.gated_watches if gate_enabled(gate))
        return self.watches + gated

    @property
    def extension_points(self) -> list[str]:
        return implemented_extension_points(self.plugin_class)

    def default_args(self, gates: GateCheck | None = None) -> PluginArgs | None:
        """The plugin's args when the configuration gives none, under the feature gates
        `gates` tells (v1.36's defaults if None)."""
        return self.args_model.read({}, gates) if self.args_model is not None else None

    def create(self, args: PluginArgs | None, handle: Handle) -> Plugin:
        plugin: Plugin = self.plugin_class(args, handle)
        return plugin
