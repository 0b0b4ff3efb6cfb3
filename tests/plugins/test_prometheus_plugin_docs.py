"""The configurations shown in docs/plugins load, and a bad arg there is named by its path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from plugins.gpu_aware import GPUAwareArgs
from plugins.gpu_aware import Strategy
from plugins.load_aware import LoadAwareArgs
from plugins.load_aware import Mode
from scheduler.config import load_config_dict
from scheduler.config import load_config_file
from scheduler.runtime.discovery import PluginRegistry

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins"


def test_the_documented_profiles_load() -> None:
    registry = PluginRegistry.discover()
    _, load = load_config_file(DOCS / "load-aware.yaml", registry)
    _, gpu = load_config_file(DOCS / "gpu-aware.yaml", registry)
    packing = load[0].plugin_args["LoadAware"]
    assert isinstance(packing, LoadAwareArgs)
    assert (packing.mode, packing.target_utilization) == (Mode.TARGET_LOAD_PACKING, 60)
    risk = load[1].plugin_args["LoadAware"]
    assert isinstance(risk, LoadAwareArgs) and risk.safe_variance_sensitivity == 2
    pack = gpu[0].plugin_args["GPUAware"]
    assert isinstance(pack, GPUAwareArgs) and pack.strategy is Strategy.PACK


def test_a_misspelt_arg_is_named_by_its_path() -> None:
    data = yaml.safe_load((DOCS / "load-aware.yaml").read_text())
    data["profiles"][0]["pluginConfig"][0]["args"]["targetUtilisation"] = 60
    with pytest.raises(
        Exception, match=r"profiles\[0\]\.pluginConfig\[0\]\.args\.targetUtilisation"
    ):
        load_config_dict(data, PluginRegistry.discover())
