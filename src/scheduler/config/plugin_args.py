"""A profile's `pluginConfig`: checking each entry's args against the plugin's args model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from scheduler.config.field_errors import FieldError
from scheduler.config.field_errors import FieldPath
from scheduler.config.field_errors import duplicate
from scheduler.config.field_errors import from_validation_error
from scheduler.config.field_errors import invalid
from scheduler.config.field_errors import not_found
from scheduler.config.models import API_VERSION
from scheduler.config.models import PluginConfig
from scheduler.config.plugin_validation import REMOVED_DETAIL
from scheduler.config.plugin_validation import REMOVED_PLUGINS
from scheduler.framework.args import GateCheck
from scheduler.framework.args import PluginArgs
from scheduler.framework.spec import PluginSpec


def args_kind(plugin_name: str) -> str:
    return f"{plugin_name}Args"


def validate_args(
    path: FieldPath,
    name: str,
    raw: Mapping[str, Any] | None,
    spec: PluginSpec,
    gates: GateCheck | None = None,
) -> tuple[PluginArgs | None, list[FieldError]]:
    """The plugin's args model built from `raw` under the feature gates `gates` tells, or the
    problems found in it.

    The type meta (apiVersion, kind) is checked and then dropped, so args read from a file
    compare equal to the same args built in code.
    """
    data = dict(raw or {})
    problems: list[FieldError] = []
    kind = data.pop("kind", None)
    if kind is not None and kind != args_kind(name):
        problems.append(invalid(path.child("kind"), kind, f'must be "{args_kind(name)}"'))
    api_version = data.pop("apiVersion", None)
    if api_version is not None and api_version != API_VERSION:
        problems.append(invalid(path.child("apiVersion"), api_version, f'must be "{API_VERSION}"'))
    if spec.args_model is None:
        if data:
            problems.append(invalid(path, data, f'plugin "{name}" takes no arguments'))
        return None, problems
    try:
        args = spec.args_model.read(data, gates)
    except ValidationError as error:
        return None, [*problems, *from_validation_error(path, error)]
    return (args if not problems else None), problems


def resolve_plugin_config(
    path: FieldPath,
    entries: list[PluginConfig],
    registry: Mapping[str, PluginSpec],
    gates: GateCheck | None = None,
) -> tuple[dict[str, PluginArgs | None], list[FieldError]]:
    """Args of every configured plugin, checked; `path` is the `pluginConfig` list's path.

    Upstream accepts args for a plugin that no extension point enables, so this does too, but
    the plugin must be known: a misspelt name would otherwise be silently ignored.
    """
    resolved: dict[str, PluginArgs | None] = {}
    problems: list[FieldError] = []
    removed_seen: set[str] = set()
    for index, entry in enumerate(entries):
        entry_path = path.index(index)
        if entry.name in REMOVED_PLUGINS:
            # Upstream reports every entry naming a removed plugin, repeated ones too.
            if entry.name in removed_seen:
                problems.append(duplicate(entry_path, entry.name))
            removed_seen.add(entry.name)
            problems.append(invalid(entry_path, entry.name, REMOVED_DETAIL))
            continue
        if entry.name in resolved:
            problems.append(duplicate(entry_path, entry.name))
            continue
        spec = registry.get(entry.name)
        if spec is None:
            problems.append(not_found(entry_path.child("name"), f'unknown plugin "{entry.name}"'))
            continue
        args, found = validate_args(entry_path.child("args"), entry.name, entry.args, spec, gates)
        problems.extend(found)
        resolved[entry.name] = args
    return resolved, problems


def args_document(plugin_name: str, args: PluginArgs) -> dict[str, Any]:
    """Args as written in a config file, with their type meta.

    Fields that are unset (None) and default to None are left out, as Go leaves out nil
    optional fields.
    """
    dumped = args.model_dump(mode="json", by_alias=True)
    for field_name, info in type(args).model_fields.items():
        key = info.serialization_alias or info.alias or field_name
        if dumped.get(key, "") is None and info.default is None:
            del dumped[key]
    return {"apiVersion": API_VERSION, "kind": args_kind(plugin_name), **dumped}
