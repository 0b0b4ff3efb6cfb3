"""Writing the effective configuration as YAML, as kube-scheduler's --write-config-to does."""

from __future__ import annotations

from typing import Any

import yaml

from scheduler.config.effective import EffectiveProfile
from scheduler.config.models import KubeSchedulerConfiguration
from scheduler.config.models import KubeSchedulerProfile
from scheduler.config.models import PluginConfig
from scheduler.config.plugin_args import args_document
from scheduler.config.yaml_rules import GoSafeDumper
from scheduler.config.yaml_rules import json_number


def dump_config(config: KubeSchedulerConfiguration, profiles: list[EffectiveProfile]) -> str:
    """YAML of a loaded (defaulted) configuration, keys sorted as upstream writes them.

    Profiles carry their merged plugin sets (the defaults under multiPoint) and a pluginConfig
    entry with fully defaulted args for every plugin that takes args; args of the plugins a
    profile runs are written from `profiles`, the values the runtime uses. Loading the text
    back gives an equal configuration and equal profiles.
    """
    if len(profiles) != len(config.profiles):
        raise ValueError("dump_config needs the effective profile of every configured profile")
    document = _omit_empty(config.model_dump(mode="json", by_alias=True, exclude={"profiles"}))
    document["profiles"] = [
        _profile_document(profile, effective)
        for profile, effective in zip(config.profiles, profiles, strict=True)
    ]
    return yaml.dump(document, Dumper=GoSafeDumper, sort_keys=True, allow_unicode=True)


def _profile_document(profile: KubeSchedulerProfile, effective: EffectiveProfile) -> Any:
    document = _omit_empty(
        profile.model_dump(mode="json", by_alias=True, exclude={"plugin_config"})
    )
    entries = [_plugin_config_document(entry, effective) for entry in profile.plugin_config]
    if entries:
        document["pluginConfig"] = entries
    return document


def _plugin_config_document(entry: PluginConfig, effective: EffectiveProfile) -> dict[str, Any]:
    args = effective.plugin_args.get(entry.name)
    if args is not None:
        return {"name": entry.name, "args": args_document(entry.name, args)}
    if entry.args is not None:
        return {"name": entry.name, "args": entry.args}
    return {"name": entry.name}


def _omit_empty(value: Any) -> Any:
    """Leave out unset optional fields and empty lists (Go's omitempty); write whole-number
    floats as integers, as Go's JSON does."""
    if isinstance(value, dict):
        return {
            key: _omit_empty(item) for key, item in value.items() if item is not None and item != []
        }
    if isinstance(value, list):
        return [_omit_empty(item) for item in value]
    if isinstance(value, float):
        return json_number(value)
    return value
