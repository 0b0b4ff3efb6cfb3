"""Loading the effective configuration the way the command line asks for it."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scheduler.config import EffectiveProfile
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config import default_config
from scheduler.config import load_config_dict
from scheduler.config import load_config_file
from scheduler.framework.args import GateCheck
from scheduler.framework.errors import ConfigError
from scheduler.framework.spec import PluginSpec
from scheduler.runtime.discovery import PluginRegistry
from scheduler.runtime.extenders import ExtenderChain

Loaded = tuple[KubeSchedulerConfiguration, list[EffectiveProfile]]


def plugin_registry(plugins: Sequence[str], *, autoload: bool = True) -> PluginRegistry:
    return PluginRegistry.discover(plugins, autoload=autoload)


def check_extenders(config: KubeSchedulerConfiguration) -> None:
    """What `run` and `simulate` need of the extenders beyond validation: TLS settings that
    load, as kube-scheduler fails building its extender clients."""
    ExtenderChain(config.extenders)


def load_effective(
    registry: Mapping[str, PluginSpec],
    *,
    path: str | Path | None = None,
    embedded: Mapping[str, Any] | None = None,
    scheduler_name: str | None = None,
    gates: GateCheck | None = None,
) -> Loaded:
    """The config from a file, else one embedded in a scenario, else upstream's defaults,
    with plugin args defaulted and checked under the feature gates `gates` tells.

    `scheduler_name` (the --scheduler-name flag) renames the only profile; with several
    profiles it is ambiguous and rejected.
    """
    if path is not None:
        config, profiles = load_config_file(path, registry, gates)
    elif embedded is not None:
        config, profiles = load_config_dict(embedded, registry, gates)
    else:
        config, profiles = default_config(registry, gates)
    if scheduler_name is None:
        return config, profiles
    if len(profiles) != 1:
        names = ", ".join(p.scheduler_name for p in profiles)
        raise ConfigError(
            f"--scheduler-name: the configuration has {len(profiles)} profiles ({names}); "
            "set schedulerName in each profile instead"
        )
    data = config.model_dump(by_alias=True, mode="json", exclude_none=True)
    data["profiles"][0]["schedulerName"] = scheduler_name
    return load_config_dict(data, registry, gates)
