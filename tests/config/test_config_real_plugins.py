"""The configuration with the in-tree plugins' own args models, found through entry points."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from scheduler.config import API_VERSION
from scheduler.config import KIND
from scheduler.config import ConfigError
from scheduler.config import default_config
from scheduler.config import dump_config
from scheduler.config import load_config_dict
from scheduler.config import load_config_text
from scheduler.framework import PluginSpec
from tests.data import MULTI_PROFILE


@pytest.fixture(scope="module")
def in_tree() -> dict[str, PluginSpec]:
    registry: dict[str, PluginSpec] = {}
    for entry in entry_points(group="kube_pyscheduler.plugins"):
        spec = entry.load()
        assert isinstance(spec, PluginSpec)
        registry[entry.name] = spec
    return registry


def test_multi_profile_config_with_in_tree_plugins(in_tree: dict[str, PluginSpec]) -> None:
    loaded = load_config_text(MULTI_PROFILE, in_tree)
    _, (default, foo) = loaded
    [weight] = [ref.weight for ref in foo.plugins["Score"] if ref.name == "InterPodAffinity"]
    assert weight == 1
    [weight] = [ref.weight for ref in default.plugins["Score"] if ref.name == "InterPodAffinity"]
    assert weight == 2
    assert load_config_text(dump_config(*loaded), in_tree) == loaded


def test_default_config_with_in_tree_plugins_round_trips(in_tree: dict[str, PluginSpec]) -> None:
    loaded = default_config(in_tree)
    assert load_config_text(dump_config(*loaded), in_tree) == loaded


def test_args_errors_of_in_tree_plugins_carry_field_paths(in_tree: dict[str, PluginSpec]) -> None:
    assert "NodeResourcesFit" in in_tree
    data = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "profiles": [
            {"schedulerName": "a"},
            {
                "schedulerName": "b",
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Bogus"}}}
                ],
            },
        ],
    }
    with pytest.raises(ConfigError) as caught:
        load_config_dict(data, in_tree)
    assert str(caught.value).startswith("profiles[1].pluginConfig[0].args.scoringStrategy.type: ")


def test_args_of_in_tree_plugins_refuse_snake_case_names(in_tree: dict[str, PluginSpec]) -> None:
    # Null values would otherwise read as unset fields: the name alone must be refused.
    fields = [
        (plugin, name)
        for plugin, spec in sorted(in_tree.items())
        if spec.args_model is not None
        for name, info in spec.args_model.model_fields.items()
        if info.alias not in (None, name) and not info.exclude
    ]
    assert ("InterPodAffinity", "hard_pod_affinity_weight") in fields
    for plugin, name in fields:
        data = {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "profiles": [
                {"schedulerName": "a", "pluginConfig": [{"name": plugin, "args": {name: None}}]}
            ],
        }
        with pytest.raises(ConfigError) as caught:
            load_config_dict(data, in_tree)
        path = f"profiles[0].pluginConfig[0].args.{name}"
        assert str(caught.value) == f'strict decoding error: unknown field "{path}"'


def test_nested_args_of_in_tree_plugins_refuse_snake_case_names(
    in_tree: dict[str, PluginSpec],
) -> None:
    args = {"prometheus": {"interval_seconds": 30}}
    data = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "profiles": [{"schedulerName": "a", "pluginConfig": [{"name": "LoadAware", "args": args}]}],
    }
    with pytest.raises(ConfigError) as caught:
        load_config_dict(data, in_tree)
    path = "profiles[0].pluginConfig[0].args.prometheus.interval_seconds"
    assert str(caught.value) == f'strict decoding error: unknown field "{path}"'
