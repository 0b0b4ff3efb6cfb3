"""What kube-scheduler runs with when nothing (or little) is configured."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.config import API_VERSION
from scheduler.config import KIND
from scheduler.config import EffectiveProfile
from scheduler.config import default_config
from scheduler.config import load_config_dict
from scheduler.framework import PluginSpec

HEADER = {"apiVersion": API_VERSION, "kind": KIND}


def chain(profile: EffectiveProfile, point: str) -> list[tuple[str, int]]:
    return [(ref.name, ref.weight) for ref in profile.plugins[point]]


def test_top_level_defaults_are_upstreams(registry: dict[str, PluginSpec]) -> None:
    config, _ = default_config(registry)
    assert config.parallelism == 16
    assert config.percentage_of_nodes_to_score == 0
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1, 10)
    assert config.enable_profiling is True
    assert config.enable_contention_profiling is True
    assert config.delay_cache_until_active is False
    assert config.extenders == []
    election = config.leader_election
    assert election.leader_elect is True
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (
        15.0,
        10.0,
        2.0,
    )
    assert (election.resource_lock, election.resource_name, election.resource_namespace) == (
        "leases",
        "kube-scheduler",
        "kube-system",
    )
    client = config.client_connection
    assert client.content_type == "application/vnd.kubernetes.protobuf"
    assert (client.qps, client.burst, client.kubeconfig) == (50.0, 100, "")


def test_default_profile_runs_upstream_defaults_present_in_the_registry(
    registry: dict[str, PluginSpec],
) -> None:
    _, [profile] = default_config(registry)
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    # Upstream's per-point default lists, restricted to the fake registry's plugins.
    assert chain(profile, "PreEnqueue") == [("SchedulingGates", 0)]
    assert chain(profile, "QueueSort") == [("PrioritySort", 0)]
    assert chain(profile, "PreFilter") == [
        ("NodeAffinity", 0),
        ("NodeResourcesFit", 0),
        ("InterPodAffinity", 0),
    ]
    assert chain(profile, "Filter") == [
        ("NodeUnschedulable", 0),
        ("TaintToleration", 0),
        ("NodeAffinity", 0),
        ("NodeResourcesFit", 0),
        ("InterPodAffinity", 0),
    ]
    assert chain(profile, "PostFilter") == [("DefaultPreemption", 0)]
    assert chain(profile, "Score") == [
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("InterPodAffinity", 2),
        ("ImageLocality", 1),
    ]
    assert chain(profile, "Bind") == [("DefaultBinder", 0)]
    for point in ("Reserve", "Permit", "PreBind", "PostBind"):
        assert chain(profile, point) == []


def test_every_extension_point_is_a_key(registry: dict[str, PluginSpec]) -> None:
    _, [profile] = default_config(registry)
    assert list(profile.plugins) == [
        "PreEnqueue",
        "QueueSort",
        "PreFilter",
        "Filter",
        "PostFilter",
        "PreScore",
        "Score",
        "Reserve",
        "Permit",
        "PreBind",
        "Bind",
        "PostBind",
    ]


def test_plugins_outside_the_upstream_default_list_are_not_enabled(
    registry: dict[str, PluginSpec],
) -> None:
    _, [profile] = default_config(registry)
    enabled = {ref.name for refs in profile.plugins.values() for ref in refs}
    assert not {name for name in registry if name.startswith("Custom")} & enabled


def test_default_set_shrinks_with_the_registry(registry: dict[str, PluginSpec]) -> None:
    del registry["ImageLocality"], registry["TaintToleration"]
    _, [profile] = default_config(registry)
    assert chain(profile, "Score") == [
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("InterPodAffinity", 2),
    ]
    assert "TaintToleration" not in profile.plugin_args


def args_of(profile: EffectiveProfile, name: str) -> dict[str, Any] | None:
    args = profile.plugin_args[name]
    return None if args is None else args.model_dump(by_alias=True)


def test_every_enabled_plugin_gets_default_args(registry: dict[str, PluginSpec]) -> None:
    _, [profile] = default_config(registry)
    assert args_of(profile, "DefaultPreemption") == {
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 100,
    }
    assert args_of(profile, "InterPodAffinity") == {
        "hardPodAffinityWeight": 1,
        "ignorePreferredTermsOfExistingPods": False,
    }
    assert args_of(profile, "NodeAffinity") == {"addedAffinity": None}
    assert args_of(profile, "PrioritySort") is None
    assert set(profile.plugin_args) == {
        "SchedulingGates",
        "PrioritySort",
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "InterPodAffinity",
        "DefaultPreemption",
        "ImageLocality",
        "DefaultBinder",
    }


def test_defaulted_config_lists_default_plugin_config_in_name_order(
    registry: dict[str, PluginSpec],
) -> None:
    config, _ = default_config(registry)
    [profile] = config.profiles
    assert [entry.name for entry in profile.plugin_config] == [
        "DefaultPreemption",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesFit",
    ]
    fit = profile.plugin_config[3].args
    assert fit is not None
    assert fit["apiVersion"] == API_VERSION
    assert fit["kind"] == "NodeResourcesFitArgs"
    assert fit["scoringStrategy"]["type"] == "LeastAllocated"


def test_defaults_live_under_multi_point(registry: dict[str, PluginSpec]) -> None:
    config, _ = default_config(registry)
    plugins = config.profiles[0].plugins
    weights = {entry.name: entry.weight for entry in plugins.multi_point.enabled}
    assert weights["TaintToleration"] == 3
    assert weights["PrioritySort"] is None
    assert plugins.score.enabled == []


@pytest.mark.parametrize(
    ("fields", "profiling", "contention"),
    [
        ({}, True, True),
        ({"enableProfiling": False}, False, False),
        ({"enableProfiling": False, "enableContentionProfiling": True}, False, True),
        ({"enableContentionProfiling": False}, True, False),
    ],
    ids=["both-default", "follows-profiling", "explicit-wins", "explicit-off"],
)
def test_contention_profiling_defaults_to_profiling(
    registry: dict[str, PluginSpec], fields: dict[str, Any], profiling: bool, contention: bool
) -> None:
    config, _ = load_config_dict({**HEADER, **fields}, registry)
    assert (config.enable_profiling, config.enable_contention_profiling) == (profiling, contention)


@pytest.mark.parametrize(
    "profiles",
    [None, [], [{}]],
    ids=["absent", "empty-list", "one-unnamed"],
)
def test_a_single_profile_is_named_default_scheduler(
    registry: dict[str, PluginSpec], profiles: list[dict[str, Any]] | None
) -> None:
    data: dict[str, Any] = dict(HEADER)
    if profiles is not None:
        data["profiles"] = profiles
    config, effective = load_config_dict(data, registry)
    assert [profile.scheduler_name for profile in config.profiles] == ["default-scheduler"]
    assert [profile.scheduler_name for profile in effective] == ["default-scheduler"]


def test_minimal_file_equals_no_file(registry: dict[str, PluginSpec]) -> None:
    assert load_config_dict(HEADER, registry) == default_config(registry)


def test_profile_percentage_is_kept_per_profile(registry: dict[str, PluginSpec]) -> None:
    data = {
        **HEADER,
        "percentageOfNodesToScore": 30,
        "profiles": [
            {"schedulerName": "a", "percentageOfNodesToScore": 50},
            {"schedulerName": "b"},
        ],
    }
    config, effective = load_config_dict(data, registry)
    assert config.percentage_of_nodes_to_score == 30
    assert [p.percentage_of_nodes_to_score for p in effective] == [50, None]
