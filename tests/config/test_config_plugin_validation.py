"""Validation of profiles' plugins and pluginConfig: each problem is reported at its field path."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.config import API_VERSION
from scheduler.config import KIND
from scheduler.config import ConfigError
from scheduler.config import load_config_dict
from scheduler.config.field_errors import ROOT
from scheduler.config.plugin_sets import PluginRef
from scheduler.config.plugin_validation import check_score_weight_total
from scheduler.framework import PluginSpec

HEADER = {"apiVersion": API_VERSION, "kind": KIND}


def problems(registry: dict[str, PluginSpec], data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config_dict(data, registry)
    return str(caught.value).splitlines()


def profile(**fields: Any) -> dict[str, Any]:
    return {**HEADER, "profiles": [fields]}


def plugins(**sets: Any) -> dict[str, Any]:
    return profile(plugins=sets)


def names(*plugin_names: str) -> list[dict[str, str]]:
    return [{"name": name} for name in plugin_names]


def config_args(name: str, args: Any) -> dict[str, Any]:
    return profile(pluginConfig=[{"name": name, "args": args}])


SORT_SWAP = {"queueSort": {"enabled": names("CustomSort"), "disabled": names("*")}}

CASES: list[tuple[str, dict[str, Any], str]] = [
    # Plugins.
    (
        "unknown-plugin-at-a-point",
        plugins(score={"enabled": names("ImageLocality", "Foo")}),
        'profiles[0].plugins.score.enabled[1].name: Not found: unknown plugin "Foo"',
    ),
    (
        "unknown-plugin-in-multi-point",
        plugins(multiPoint={"enabled": names("Foo")}),
        'profiles[0].plugins.multiPoint.enabled[0].name: Not found: unknown plugin "Foo"',
    ),
    (
        "plugin-at-a-pod-group-placement-point",
        plugins(placementScore={"enabled": names("ImageLocality")}),
        'profiles[0].plugins.placementScore.enabled[0].name: Invalid value: "ImageLocality": '
        'plugin "ImageLocality" does not implement the PlacementScore extension point',
    ),
    (
        "plugin-at-a-point-it-does-not-implement",
        plugins(filter={"enabled": names("ImageLocality")}),
        'profiles[0].plugins.filter.enabled[0].name: Invalid value: "ImageLocality": '
        'plugin "ImageLocality" does not implement the Filter extension point',
    ),
    (
        "removed-plugin",
        plugins(filter={"enabled": names("EBSLimits")}),
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": '
        'was invalid in version "v1" (KubeSchedulerConfiguration is version '
        '"kubescheduler.config.k8s.io/v1")',
    ),
    (
        # Upstream checks removed names only at the twelve extension points; elsewhere a
        # removed plugin is just one that does not exist.
        "removed-plugin-in-multi-point",
        plugins(multiPoint={"enabled": names("AzureDiskLimits")}),
        "profiles[0].plugins.multiPoint.enabled[0].name: "
        'Not found: unknown plugin "AzureDiskLimits"',
    ),
    (
        "removed-plugin-in-plugin-config",
        profile(pluginConfig=[{"name": "GCEPDLimits", "args": {"x": 1}}]),
        'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": '
        'was invalid in version "v1" (KubeSchedulerConfiguration is version '
        '"kubescheduler.config.k8s.io/v1")',
    ),
    (
        "duplicate-at-a-point",
        plugins(score={"enabled": names("CustomScore", "CustomScore")}),
        'profiles[0].plugins.score.enabled[1].name: Duplicate value: "CustomScore"',
    ),
    (
        "duplicate-in-multi-point",
        plugins(multiPoint={"enabled": names("NodeAffinity", "NodeAffinity")}),
        'profiles[0].plugins.multiPoint.enabled[1].name: Duplicate value: "NodeAffinity"',
    ),
    (
        "no-queue-sort",
        plugins(multiPoint={"disabled": names("PrioritySort")}),
        "profiles[0].plugins.queueSort: Required value: no queue sort plugin is enabled",
    ),
    (
        "two-queue-sorts",
        plugins(queueSort={"enabled": names("CustomSort")}),
        'profiles[0].plugins.queueSort.enabled: Invalid value: ["PrioritySort", "CustomSort"]: '
        "only one queue sort plugin can be enabled",
    ),
    (
        "no-bind",
        plugins(bind={"disabled": names("*")}),
        "profiles[0].plugins.bind: Required value: at least one bind plugin is needed",
    ),
    (
        "queue-sort-differs-between-profiles",
        {
            **HEADER,
            "profiles": [{"schedulerName": "a"}, {"schedulerName": "b", "plugins": SORT_SWAP}],
        },
        'profiles[1].plugins.queueSort: Invalid value: ["CustomSort"]: '
        "must be the same for all profiles",
    ),
    (
        "queue-sort-sets-differ-though-the-plugin-is-the-same",
        {
            **HEADER,
            "profiles": [
                {
                    "schedulerName": "a",
                    "plugins": {"queueSort": {"enabled": names("PrioritySort")}},
                },
                {"schedulerName": "b"},
            ],
        },
        'profiles[1].plugins.queueSort: Invalid value: ["PrioritySort"]: '
        "must be the same for all profiles",
    ),
    (
        "queue-sort-args-differ-between-profiles",
        {
            **HEADER,
            "profiles": [
                {"schedulerName": "a", "plugins": SORT_SWAP},
                {
                    "schedulerName": "b",
                    "plugins": SORT_SWAP,
                    "pluginConfig": [{"name": "CustomSort", "args": {"order": "fifo"}}],
                },
            ],
        },
        "profiles[1].pluginConfig[0].args: Invalid value: "
        '{"order": "fifo"}: must be the same for all profiles',
    ),
    # Plugin config.
    (
        "duplicate-plugin-config",
        profile(pluginConfig=[{"name": "NodeAffinity"}, {"name": "NodeAffinity"}]),
        'profiles[0].pluginConfig[1]: Duplicate value: "NodeAffinity"',
    ),
    (
        "plugin-config-for-unknown-plugin",
        config_args("Foo", {}),
        'profiles[0].pluginConfig[0].name: Not found: unknown plugin "Foo"',
    ),
    (
        "args-enum",
        config_args("NodeResourcesFit", {"scoringStrategy": {"type": "Bogus"}}),
        "profiles[0].pluginConfig[0].args.scoringStrategy.type: Input should be ",
    ),
    (
        "args-list-item",
        config_args(
            "NodeResourcesFit",
            {"scoringStrategy": {"resources": [{"name": "cpu"}, {"name": "gpu", "weight": 0}]}},
        ),
        "profiles[0].pluginConfig[0].args.scoringStrategy.resources[1].weight: "
        "Input should be greater than 0",
    ),
    (
        "args-unknown-field",
        config_args("NodeAffinity", {"addedAffinty": {}}),
        'strict decoding error: unknown field "profiles[0].pluginConfig[0].args.addedAffinty"',
    ),
    (
        "args-kind",
        config_args("NodeAffinity", {"kind": "InterPodAffinityArgs"}),
        'profiles[0].pluginConfig[0].args.kind: Invalid value: "InterPodAffinityArgs": '
        'must be "NodeAffinityArgs"',
    ),
    (
        "args-api-version",
        config_args("NodeAffinity", {"apiVersion": "v1"}),
        'profiles[0].pluginConfig[0].args.apiVersion: Invalid value: "v1": '
        'must be "kubescheduler.config.k8s.io/v1"',
    ),
    (
        "args-for-plugin-without-args",
        config_args("ImageLocality", {"x": 1}),
        'profiles[0].pluginConfig[0].args: Invalid value: {"x": 1}: '
        'plugin "ImageLocality" takes no arguments',
    ),
]


@pytest.mark.parametrize(
    ("data", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_problem_is_reported_at_its_path(
    registry: dict[str, PluginSpec], data: dict[str, Any], expected: str
) -> None:
    lines = problems(registry, data)
    assert any(line.startswith(expected) for line in lines), lines


def test_plugin_config_for_a_known_plugin_that_is_not_enabled_is_accepted(
    registry: dict[str, PluginSpec],
) -> None:
    config, [effective] = load_config_dict(config_args("CustomSort", {"order": "fifo"}), registry)
    assert "CustomSort" not in effective.plugin_args
    assert config.profiles[0].plugin_config[0].args == {
        "apiVersion": API_VERSION,
        "kind": "CustomSortArgs",
        "order": "fifo",
    }


def test_args_with_matching_type_meta_are_accepted(registry: dict[str, PluginSpec]) -> None:
    args = {"apiVersion": API_VERSION, "kind": "InterPodAffinityArgs", "hardPodAffinityWeight": 5}
    _, [effective] = load_config_dict(config_args("InterPodAffinity", args), registry)
    weight = effective.plugin_args["InterPodAffinity"]
    assert weight is not None
    assert weight.model_dump(by_alias=True)["hardPodAffinityWeight"] == 5


@pytest.mark.parametrize(
    ("weights", "overflows"),
    [
        ([1, 2, 3], False),
        ([(2**63 - 1) // 100], False),
        ([(2**63 - 1) // 100, 1], True),
        ([2**62, 2**62], True),
    ],
    ids=["small", "exactly-fits", "one-too-many", "huge"],
)
def test_score_weight_total_must_fit_int64(weights: list[int], overflows: bool) -> None:
    refs = [PluginRef(f"P{i}", weight) for i, weight in enumerate(weights)]
    lines = [str(p) for p in check_score_weight_total(ROOT.child("score"), refs)]
    if overflows:
        assert len(lines) == 1
        assert lines[0].startswith("score: Invalid value: ")
        assert lines[0].endswith("total score of Score plugins could overflow")
    else:
        assert lines == []


def test_empty_or_disabled_placement_points_are_accepted(
    registry: dict[str, PluginSpec],
) -> None:
    data = plugins(placementGenerate={}, placementScore={"disabled": names("*")})
    _, [loaded] = load_config_dict(data, registry)
    assert loaded.scheduler_name == "default-scheduler"


def test_removed_plugin_in_plugin_config_is_reported_once_per_entry(
    registry: dict[str, PluginSpec],
) -> None:
    data = profile(pluginConfig=[{"name": "CinderLimits"}, {"name": "CinderLimits"}])
    removed = (
        'Invalid value: "CinderLimits": was invalid in version "v1" '
        '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
    )
    assert problems(registry, data) == [
        f"profiles[0].pluginConfig[0]: {removed}",
        'profiles[0].pluginConfig[1]: Duplicate value: "CinderLimits"',
        f"profiles[0].pluginConfig[1]: {removed}",
    ]


# Only the Score plugins the profile names, so the order of the weights is the file's.
ONLY_NAMED = {
    "multiPoint": {"disabled": names("*")},
    "queueSort": {"enabled": names("PrioritySort")},
    "bind": {"enabled": names("DefaultBinder")},
}


def _scores(*weights: tuple[str, int]) -> dict[str, Any]:
    enabled = [{"name": name, "weight": weight} for name, weight in weights]
    return plugins(**ONLY_NAMED, score={"enabled": enabled})


@pytest.mark.parametrize(
    "data",
    [
        _scores(("ImageLocality", -3), ("CustomScore", 1)),
        _scores(("ImageLocality", -3), ("CustomScore", -3)),
        # Upstream counts the multiPoint defaults after the score set, whether or not they run.
        plugins(score={"enabled": [{"name": "ImageLocality", "weight": -3}]}),
        plugins(score={"disabled": names("*"), "enabled": [{"name": "CustomScore", "weight": -1}]}),
    ],
    ids=["negative-then-positive", "two-negatives", "before-defaults", "defaults-disabled"],
)
def test_negative_weight_followed_by_a_score_plugin_could_overflow(
    registry: dict[str, PluginSpec], data: dict[str, Any]
) -> None:
    # Upstream's int64 check wraps once the running total is negative, so any Score plugin
    # after a negative weight fails it.
    [line] = problems(registry, data)
    assert line.startswith("profiles[0].plugins.score: Invalid value: ")
    assert line.endswith(": total score of Score plugins could overflow")


@pytest.mark.parametrize(
    "data",
    [
        _scores(("CustomScore", 1), ("ImageLocality", -3)),
        # ImageLocality takes its default's place in multiPoint; no Score plugin follows it.
        plugins(multiPoint={"enabled": [{"name": "ImageLocality", "weight": -3}]}),
    ],
    ids=["negative-last", "negative-last-in-multi-point"],
)
def test_negative_weight_of_the_last_score_plugin_is_accepted(
    registry: dict[str, PluginSpec], data: dict[str, Any]
) -> None:
    _, [effective] = load_config_dict(data, registry)
    assert {ref.name: ref.weight for ref in effective.plugins["Score"]}["ImageLocality"] == -3


def test_a_plugin_at_a_point_it_does_not_implement_is_reported_once(
    registry: dict[str, PluginSpec],
) -> None:
    assert problems(registry, plugins(filter={"enabled": names("PrioritySort")})) == [
        'profiles[0].plugins.filter.enabled[0].name: Invalid value: "PrioritySort": '
        'plugin "PrioritySort" does not implement the Filter extension point'
    ]


def test_a_later_profile_without_the_first_one_s_queue_sort_is_reported_once(
    registry: dict[str, PluginSpec],
) -> None:
    data = {
        **HEADER,
        "profiles": [
            {"schedulerName": "a"},
            {"schedulerName": "b", "plugins": {"queueSort": {"disabled": names("*")}}},
        ],
    }
    assert problems(registry, data) == [
        "profiles[1].plugins.queueSort: Invalid value: []: must be the same for all profiles"
    ]


def test_profiles_without_any_queue_sort_are_reported_at_the_first(
    registry: dict[str, PluginSpec],
) -> None:
    # Upstream stops at the first profile whose framework cannot be built.
    no_sort = {"queueSort": {"disabled": names("*")}}
    data = {
        **HEADER,
        "profiles": [
            {"schedulerName": "a", "plugins": no_sort},
            {"schedulerName": "b", "plugins": no_sort},
        ],
    }
    assert problems(registry, data) == [
        "profiles[0].plugins.queueSort: Required value: no queue sort plugin is enabled"
    ]
