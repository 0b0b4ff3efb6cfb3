"""Plugin-set merging and multiPoint expansion: which plugins run at each extension point.

Two steps, as upstream does them:
1. `merge_plugins` folds a profile's `plugins` into the default ones (config defaulting);
2. `expand_extension_point` turns the merged sets into the ordered plugin list of one
   extension point (framework construction), and `score_weights` resolves Score weights.
Both assume names were checked against the registry; unknown names are skipped here.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

from scheduler.config.models import Plugin
from scheduler.config.models import Plugins
from scheduler.config.models import PluginSet
from scheduler.framework.spec import PluginSpec

# Upstream extension point names in run order, and the `plugins` field that configures each.
EXTENSION_POINT_FIELDS: dict[str, str] = {
    "PreEnqueue": "preEnqueue",
    "QueueSort": "queueSort",
    "PreFilter": "preFilter",
    "Filter": "filter",
    "PostFilter": "postFilter",
    "PreScore": "preScore",
    "Score": "score",
    "Reserve": "reserve",
    "Permit": "permit",
    "PreBind": "preBind",
    "Bind": "bind",
    "PostBind": "postBind",
}
EXTENSION_POINTS: tuple[str, ...] = tuple(EXTENSION_POINT_FIELDS)
MULTI_POINT_FIELD = "multiPoint"
ALL_PLUGINS = "*"


@dataclass(frozen=True, slots=True)
class PluginRef:
    """A plugin enabled at an extension point; `weight` is resolved (1+ for Score, else 0)."""

    name: str
    weight: int


def plugin_set(plugins: Plugins, field: str) -> PluginSet:
    """The set configured under `field` ("filter", "multiPoint", ...)."""
    result: PluginSet = getattr(plugins, _attribute(field))
    return result


def _attribute(field: str) -> str:
    return "".join(f"_{char.lower()}" if char.isupper() else char for char in field)


def merge_plugin_set(defaults: PluginSet, custom: PluginSet) -> PluginSet:
    """Fold a user's plugin set into the default one.

    Disabling "*" drops every default, disabling a name drops that default; a user-enabled
    plugin that is also a default takes the default's place (keeping the default order, taking
    the user's weight); the other user-enabled plugins follow in the user's order. The disabled
    list is kept so that multiPoint expansion can honour it later.
    """
    disabled = [Plugin(name=p.name) for p in (*custom.disabled, *defaults.disabled)]
    disabled_names = {plugin.name for plugin in disabled}
    # The last user entry of a name is the one that replaces a default; any earlier entry is
    # appended and later reported as a duplicate.
    custom_by_name = {plugin.name: index for index, plugin in enumerate(custom.enabled)}
    replacing: set[int] = set()
    enabled: list[Plugin] = []
    if ALL_PLUGINS not in disabled_names:
        for default in defaults.enabled:
            if default.name in disabled_names:
                continue
            index = custom_by_name.get(default.name)
            if index is not None:
                replacing.add(index)
                enabled.append(custom.enabled[index])
            else:
                enabled.append(default)
    enabled.extend(p for index, p in enumerate(custom.enabled) if index not in replacing)
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(defaults: Plugins, custom: Plugins) -> Plugins:
    fields = (*EXTENSION_POINT_FIELDS.values(), MULTI_POINT_FIELD)
    merged = {
        _attribute(field): merge_plugin_set(plugin_set(defaults, field), plugin_set(custom, field))
        for field in fields
    }
    return Plugins.model_validate(merged)


def expand_extension_point(
    point: str, plugins: Plugins, registry: Mapping[str, PluginSpec]
) -> list[str]:
    """Names of the plugins that run at `point`, in order, after multiPoint expansion.

    A multiPoint plugin is added at every point it implements unless that point disables it
    (by name or "*"). Plugins configured at the point itself win over their multiPoint entry.
    The order is upstream's: plugins listed at the point that override a multiPoint entry (in
    the point's order), then the multiPoint-only plugins, then the point's other plugins.
    """
    specific = plugin_set(plugins, EXTENSION_POINT_FIELDS[point])
    specific_names = _unique(plugin.name for plugin in specific.enabled if plugin.name in registry)
    disabled = {plugin.name for plugin in specific.disabled}
    if ALL_PLUGINS in disabled:
        return specific_names
    overriding: set[str] = set()
    from_multi_point: list[str] = []
    for entry in plugin_set(plugins, MULTI_POINT_FIELD).enabled:
        spec = registry.get(entry.name)
        if spec is None or point not in spec.extension_points or entry.name in disabled:
            continue
        if entry.name in specific_names:
            overriding.add(entry.name)
        elif entry.name not in from_multi_point:
            from_multi_point.append(entry.name)
    first = [name for name in specific_names if name in overriding]
    last = [name for name in specific_names if name not in overriding]
    return [*first, *from_multi_point, *last]


def score_weights(plugins: Plugins, names: list[str]) -> dict[str, int]:
    """Score weight of each of `names`: the Score entry's weight, else the multiPoint entry's.

    An unset or zero weight means 1 (upstream: a zero weight is not permitted; disable the
    plugin instead).
    """
    configured: dict[str, int | None] = {}
    for entry in (*plugins.score.enabled, *plugins.multi_point.enabled):
        configured.setdefault(entry.name, entry.weight)
    return {name: configured.get(name) or 1 for name in names}


def needed_plugin_names(plugins: Plugins) -> list[str]:
    """Every plugin enabled anywhere (the plugins a framework instantiates), sorted."""
    fields = (*EXTENSION_POINT_FIELDS.values(), MULTI_POINT_FIELD)
    return sorted({p.name for field in fields for p in plugin_set(plugins, field).enabled})


def _unique(names: Iterable[str]) -> list[str]:
    result: list[str] = []
    for name in names:
        if name not in result:
            result.append(name)
    return result
