"""Checks on a profile's plugins, the ones upstream makes when it builds a framework.

`check_plugin_sets` looks at the sets as the user wrote them, so paths point at the user's
entries; `check_chains` and `check_common_queue_sort` look at the effective result.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

from scheduler.config.effective import EffectiveProfile
from scheduler.config.field_errors import FieldError
from scheduler.config.field_errors import FieldPath
from scheduler.config.field_errors import duplicate
from scheduler.config.field_errors import invalid
from scheduler.config.field_errors import not_found
from scheduler.config.field_errors import required
from scheduler.config.models import API_VERSION
from scheduler.config.models import Plugins
from scheduler.config.models import PluginSet
from scheduler.config.plugin_sets import EXTENSION_POINT_FIELDS
from scheduler.config.plugin_sets import MULTI_POINT_FIELD
from scheduler.config.plugin_sets import PluginRef
from scheduler.config.plugin_sets import plugin_set
from scheduler.framework.contract import contract_problems
from scheduler.framework.contract import registration_problems
from scheduler.framework.spec import PluginSpec
from scheduler.framework.status import MAX_NODE_SCORE

# Plugin names that v1 configurations may no longer name (removed in Kubernetes 1.31).
REMOVED_PLUGINS = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})
# Upstream's text, where "v1" is the version it records the names under (core v1's, as it
# happens, not the configuration's).
REMOVED_DETAIL = (
    f'was invalid in version "v1" (KubeSchedulerConfiguration is version "{API_VERSION}")'
)
INT64_MIN = -(2**63)
MAX_TOTAL_SCORE = 2**63 - 1
# v1.36's pod-group placement points (alpha TopologyAwareWorkloadScheduling): accepted in the
# configuration, but no plugin implements them, so enabling one there is refused by name.
PLACEMENT_POINT_FIELDS = {
    "placementGenerate": "PlacementGenerate",
    "placementScore": "PlacementScore",
}


def check_plugin_sets(
    path: FieldPath, plugins: Plugins, registry: Mapping[str, PluginSpec]
) -> list[FieldError]:
    """Names enabled in each set must be known, not removed, not repeated, and (outside
    multiPoint) implement the extension point they are enabled at. `path` is `plugins`.

    Upstream looks for removed names only at the twelve extension points; in multiPoint and
    the placement points a removed plugin is simply one that does not exist."""
    problems: list[FieldError] = []
    fields = {field: point for point, field in EXTENSION_POINT_FIELDS.items()}
    fields.update(PLACEMENT_POINT_FIELDS)
    fields[MULTI_POINT_FIELD] = ""
    for field, point in fields.items():
        seen: set[str] = set()
        for index, entry in enumerate(plugin_set(plugins, field).enabled):
            entry_path = path.child(field, "enabled").index(index)
            spec = registry.get(entry.name)
            if entry.name in REMOVED_PLUGINS and field in EXTENSION_POINT_FIELDS.values():
                problems.append(invalid(entry_path, entry.name, REMOVED_DETAIL))
            elif spec is None:
                problems.append(
                    not_found(entry_path.child("name"), f'unknown plugin "{entry.name}"')
                )
            elif point and point not in spec.extension_points:
                detail = f'plugin "{entry.name}" does not implement the {point} extension point'
                problems.append(invalid(entry_path.child("name"), entry.name, detail))
            if entry.name in seen:
                problems.append(duplicate(entry_path.child("name"), entry.name))
            seen.add(entry.name)
    return problems


def _int64(value: int) -> int:
    """`value` wrapped around as Go's int64 arithmetic wraps it."""
    return (value - INT64_MIN) % 2**64 + INT64_MIN


def check_score_weight_total(path: FieldPath, score: Sequence[PluginRef]) -> list[FieldError]:
    """The weighted sum of maximum scores must fit in an int64, checked in upstream's int64
    arithmetic: once a negative weight makes the running total negative, the room left wraps
    around to a negative number, so any Score plugin after it fails the check."""
    total = 0
    for ref in score:
        if ref.weight * MAX_NODE_SCORE > _int64(MAX_TOTAL_SCORE - total):
            weights = {r.name: r.weight for r in score}
            return [invalid(path, weights, "total score of Score plugins could overflow")]
        total = _int64(total + ref.weight * MAX_NODE_SCORE)
    return []


def score_weight_entries(plugins: Plugins, registry: Mapping[str, PluginSpec]) -> list[PluginRef]:
    """The plugins whose weights upstream adds up, in its order: the merged score set, then
    the merged multiPoint set (whether or not a plugin there still runs at Score), each
    plugin that implements Score once, at its first entry, with an unset or zero weight as 1."""
    refs: list[PluginRef] = []
    seen: set[str] = set()
    for entry in (*plugins.score.enabled, *plugins.multi_point.enabled):
        spec = registry.get(entry.name)
        if spec is None or "Score" not in spec.extension_points or entry.name in seen:
            continue
        seen.add(entry.name)
        refs.append(PluginRef(entry.name, entry.weight or 1))
    return refs


def check_score_weights(
    path: FieldPath, merged: Plugins, registry: Mapping[str, PluginSpec]
) -> list[FieldError]:
    """Score weights that add up; `merged` are the profile's sets folded into the defaults and
    `path` is the profile's `plugins`."""
    return check_score_weight_total(path.child("score"), score_weight_entries(merged, registry))


def check_chains(path: FieldPath, profile: EffectiveProfile, *, first: bool) -> list[FieldError]:
    """Exactly one QueueSort plugin and at least one Bind plugin. `path` is the profile's
    `plugins`.

    QueueSort is checked in the `first` profile only: every other profile must have the same
    one, and `check_common_queue_sort` reports a profile that does not, as upstream does.
    """
    problems: list[FieldError] = []
    queue_sort = [ref.name for ref in profile.plugins["QueueSort"]]
    if first and not queue_sort:
        problems.append(required(path.child("queueSort"), "no queue sort plugin is enabled"))
    elif first and len(queue_sort) > 1:
        problems.append(
            invalid(
                path.child("queueSort", "enabled"),
                queue_sort,
                "only one queue sort plugin can be enabled",
            )
        )
    if not profile.plugins["Bind"]:
        problems.append(required(path.child("bind"), "at least one bind plugin is needed"))
    return problems


def plugin_origin(registry: Mapping[str, PluginSpec], name: str) -> str:
    """Where a plugin comes from (its distribution), when the registry knows."""
    origin = getattr(registry, "origin", None)
    return f" from {origin(name)}" if callable(origin) else ""


def check_contracts(
    path: FieldPath, profile: EffectiveProfile, registry: Mapping[str, PluginSpec]
) -> list[FieldError]:
    """Each plugin has the methods, signatures and companions of every extension point it is
    enabled at in the effective profile. `path` is the profile's `plugins`."""
    problems: list[FieldError] = []
    checked: set[str] = set()
    for point, refs in profile.plugins.items():
        field = EXTENSION_POINT_FIELDS.get(point)
        for ref in refs:
            spec = registry.get(ref.name)
            # A plugin enabled where it does not belong is reported by check_plugin_sets.
            if spec is None or field is None or point not in spec.extension_points:
                continue
            found = contract_problems(spec.plugin_class, point)
            if ref.name not in checked:
                checked.add(ref.name)
                found += registration_problems(spec.plugin_class)
            # The effective chain, not the user's list (multiPoint and defaults feed it too).
            for problem in found:
                detail = f'plugin "{ref.name}"{plugin_origin(registry, ref.name)} {problem}'
                problems.append(invalid(path.child(field), ref.name, detail))
    return problems


def _comparable(plugins: PluginSet) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
    # Upstream compares sets after decoding, where an unset weight reads as 0.
    return (
        tuple((entry.name, entry.weight or 0) for entry in plugins.enabled),
        tuple(entry.name for entry in plugins.disabled),
    )


def check_common_queue_sort(
    path: FieldPath,
    merged: Sequence[Plugins],
    plugin_configs: Sequence[Sequence[str]],
    profiles: Sequence[EffectiveProfile],
) -> list[FieldError]:
    """Every profile must configure the same queueSort set, end up with the same QueueSort
    plugin and give it the same args: one queue serves all profiles. `path` is `profiles`;
    `plugin_configs` are the names in each profile's pluginConfig, for error paths."""
    problems: list[FieldError] = []
    first_set = _comparable(merged[0].queue_sort)
    first_sort = [ref.name for ref in profiles[0].plugins["QueueSort"]]
    for index in range(1, len(profiles)):
        sort = [ref.name for ref in profiles[index].plugins["QueueSort"]]
        if _comparable(merged[index].queue_sort) != first_set or sort != first_sort:
            problems.append(
                invalid(
                    path.index(index).child("plugins", "queueSort"),
                    sort,
                    "must be the same for all profiles",
                )
            )
            continue
        for name in sort:
            args = profiles[index].plugin_args.get(name)
            if args == profiles[0].plugin_args.get(name):
                continue
            names = list(plugin_configs[index])
            args_path = path.index(index).child("pluginConfig")
            if name in names:
                args_path = args_path.index(names.index(name)).child("args")
            problems.append(invalid(args_path, args, "must be the same for all profiles"))
    return problems
