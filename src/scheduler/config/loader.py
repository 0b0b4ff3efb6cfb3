"""Reading a KubeSchedulerConfiguration from a file, text or mapping."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scheduler.config.documents import load_yaml_or_json
from scheduler.config.documents import read_text
from scheduler.config.effective import EffectiveProfile
from scheduler.config.field_errors import ROOT
from scheduler.config.field_errors import from_validation_error
from scheduler.config.field_errors import raise_if_any
from scheduler.config.field_errors import required
from scheduler.config.field_errors import unsupported
from scheduler.config.models import API_VERSION
from scheduler.config.models import KIND
from scheduler.config.models import KubeSchedulerConfiguration
from scheduler.config.resolve import resolve
from scheduler.framework.args import GateCheck
from scheduler.framework.errors import ConfigError
from scheduler.framework.spec import PluginSpec

Loaded = tuple[KubeSchedulerConfiguration, list[EffectiveProfile]]


def load_config_file(
    path: str | Path, registry: Mapping[str, PluginSpec], gates: GateCheck | None = None
) -> Loaded:
    """Load, default and validate the configuration in `path` (YAML or JSON)."""
    return load_config_text(read_text(path), registry, source=str(path), gates=gates)


def load_config_text(
    text: str,
    registry: Mapping[str, PluginSpec],
    *,
    source: str = "<config>",
    gates: GateCheck | None = None,
) -> Loaded:
    """Load, default and validate a configuration given as YAML or JSON text; `source` names
    it in parse errors."""
    data = load_yaml_or_json(text, source)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: the configuration must be a mapping (a YAML object)")
    return load_config_dict(data, registry, gates)


def load_config_dict(
    data: Mapping[str, Any], registry: Mapping[str, PluginSpec], gates: GateCheck | None = None
) -> Loaded:
    """Load, default and validate a decoded configuration. Plugin args whose defaults or
    rules follow a feature gate, as upstream's do, follow `gates` (v1.36's defaults if None)."""
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
        config = KubeSchedulerConfiguration.from_document(dict(data))
    except ValidationError as error:
        raise_if_any(from_validation_error(ROOT, error))
        raise  # pragma: no cover - a ValidationError always has at least one error
    return resolve(config, registry, gates)


def default_config(registry: Mapping[str, PluginSpec], gates: GateCheck | None = None) -> Loaded:
    """The configuration kube-scheduler runs with when no --config is given."""
    return resolve(KubeSchedulerConfiguration(), registry, gates)
