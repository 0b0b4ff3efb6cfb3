"""Reading a KubeSchedulerConfiguration from a file, text or mapping."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from scheduler.config.effective import EffectiveProfile
from scheduler.config.field_errors import (
    ROOT,
    from_validation_error,
    raise_if_any,
    required,
    unsupported,
)
from scheduler.config.models import API_VERSION, KIND, KubeSchedulerConfiguration
from scheduler.config.resolve import resolve
from scheduler.framework.errors import ConfigError
from scheduler.framework.spec import PluginSpec

Loaded = tuple[KubeSchedulerConfiguration, list[EffectiveProfile]]


class _StrictLoader(yaml.SafeLoader):
    """A YAML loader that rejects repeated keys, as upstream's strict decoding does."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"found duplicate key {key!r}")
        result[key] = value
    return result


def _parse(text: str, source: str) -> Any:
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text, object_pairs_hook=_unique_keys)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{source}:{error.lineno}:{error.colno}: {error.msg}") from error
        except ValueError as error:
            raise ConfigError(f"{source}: {error}") from error
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = error.problem or error.context or "invalid YAML"
        raise ConfigError(f"{where}: {problem}") from error
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: {error}") from error


def load_config_file(path: str | Path, registry: Mapping[str, PluginSpec]) -> Loaded:
    """Load, default and validate the configuration in `path` (YAML or JSON)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the configuration: {error}") from error
    return load_config_text(text, registry, source=str(path))


def load_config_text(
    text: str, registry: Mapping[str, PluginSpec], *, source: str = "<config>"
) -> Loaded:
    """Load, default and validate a configuration given as YAML or JSON text; `source` names
    it in parse errors."""
    data = _parse(text, source)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: the configuration must be a mapping (a YAML object)")
    return load_config_dict(data, registry)


def load_config_dict(data: Mapping[str, Any], registry: Mapping[str, PluginSpec]) -> Loaded:
    """Load, default and validate a decoded configuration."""
    type_problems = []
    for field, expected in (("apiVersion", API_VERSION), ("kind", KIND)):
        value = data.get(field)
        if value is None:
            type_problems.append(required(ROOT.child(field), f'must be "{expected}"'))
        elif value != expected:
            type_problems.append(unsupported(ROOT.child(field), value, [expected]))
    # A different type's fields would only produce noise: stop at the type.
    raise_if_any(type_problems)
    try:
        config = KubeSchedulerConfiguration.model_validate(dict(data))
    except ValidationError as error:
        raise_if_any(from_validation_error(ROOT, error))
        raise  # pragma: no cover - a ValidationError always has at least one error
    return resolve(config, registry)


def default_config(registry: Mapping[str, PluginSpec]) -> Loaded:
    """The configuration kube-scheduler runs with when no --config is given."""
    return resolve(KubeSchedulerConfiguration(), registry)
