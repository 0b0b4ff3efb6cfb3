"""From a decoded configuration to the defaulted one and its effective profiles.

Defaulting follows upstream's v1 defaulting (profiles, merged plugin sets, a pluginConfig entry
with default args for every instantiated plugin that takes args); validation then collects every
problem, from the configuration's fields and from what each framework would be built from.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.config.defaults import default_plugins
from scheduler.config.defaults import default_profiles
from scheduler.config.effective import EffectiveProfile
from scheduler.config.effective import build_effective_profile
from scheduler.config.extender_settings import apply_extender_settings
from scheduler.config.field_errors import ROOT
from scheduler.config.field_errors import FieldError
from scheduler.config.field_errors import raise_if_any
from scheduler.config.models import KubeSchedulerConfiguration
from scheduler.config.models import KubeSchedulerProfile
from scheduler.config.models import PluginConfig
from scheduler.config.plugin_args import args_document
from scheduler.config.plugin_args import resolve_plugin_config
from scheduler.config.plugin_sets import merge_plugins
from scheduler.config.plugin_validation import check_chains
from scheduler.config.plugin_validation import check_common_queue_sort
from scheduler.config.plugin_validation import check_contracts
from scheduler.config.plugin_validation import check_plugin_sets
from scheduler.config.plugin_validation import check_score_weights
from scheduler.config.validation import validate_configuration
from scheduler.framework.args import GateCheck
from scheduler.framework.args import PluginArgs
from scheduler.framework.spec import PluginSpec


def resolve(
    config: KubeSchedulerConfiguration,
    registry: Mapping[str, PluginSpec],
    gates: GateCheck | None = None,
) -> tuple[KubeSchedulerConfiguration, list[EffectiveProfile]]:
    """Default and validate `config` under the feature gates `gates` tells (v1.36's defaults
    if None); raises ConfigError listing every problem found."""
    config = config.model_copy(update={"profiles": default_profiles(config.profiles)})
    problems: list[FieldError] = validate_configuration(config)
    defaults = default_plugins(registry)
    profiles: list[KubeSchedulerProfile] = []
    effective: list[EffectiveProfile] = []
    for index, profile in enumerate(config.profiles):
        path = ROOT.child("profiles").index(index)
        problems += check_plugin_sets(path.child("plugins"), profile.plugins, registry)
        merged = merge_plugins(defaults, profile.plugins)
        configured, found = resolve_plugin_config(
            path.child("pluginConfig"), profile.plugin_config, registry, gates
        )
        problems += found
        result = build_effective_profile(
            profile.scheduler_name or "",
            profile.percentage_of_nodes_to_score,
            merged,
            configured,
            registry,
            gates,
        )
        problems += check_chains(path.child("plugins"), result, first=index == 0)
        problems += check_score_weights(path.child("plugins"), merged, registry)
        problems += check_contracts(path.child("plugins"), result, registry)
        effective.append(result)
        plugin_config = _defaulted_plugin_config(profile.plugin_config, configured, result)
        profiles.append(
            profile.model_copy(update={"plugins": merged, "plugin_config": plugin_config})
        )
    if effective:
        problems += check_common_queue_sort(
            ROOT.child("profiles"),
            [profile.plugins for profile in profiles],
            [[entry.name for entry in profile.plugin_config] for profile in config.profiles],
            effective,
        )
    config, found = apply_extender_settings(config, profiles, effective)
    problems += found
    raise_if_any(problems)
    return config.model_copy(update={"profiles": profiles}), effective


def _defaulted_plugin_config(
    entries: list[PluginConfig],
    configured: Mapping[str, PluginArgs | None],
    profile: EffectiveProfile,
) -> list[PluginConfig]:
    """The user's entries with fully defaulted args, then one entry for every instantiated
    plugin that takes args but was not configured (in name order, as upstream appends them)."""
    result = [_entry(entry.name, configured.get(entry.name)) for entry in entries]
    for name, args in sorted(profile.plugin_args.items()):
        if name not in configured and args is not None:
            result.append(_entry(name, args))
    return result


def _entry(name: str, args: PluginArgs | None) -> PluginConfig:
    return PluginConfig(name=name, args=args_document(name, args) if args is not None else None)
