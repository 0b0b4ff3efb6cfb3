"""Merging a profile's plugin sets into the defaults, and multiPoint expansion.

The fake registry's default multiPoint list is, in upstream order: SchedulingGates,
PrioritySort, NodeUnschedulable, TaintToleration (Score 3), NodeAffinity (2), NodeResourcesFit
(1), InterPodAffinity (2), DefaultPreemption, ImageLocality (1), DefaultBinder.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.config import API_VERSION
from scheduler.config import KIND
from scheduler.config import EffectiveProfile
from scheduler.config import load_config_dict
from scheduler.config.models import Plugin
from scheduler.config.models import PluginSet
from scheduler.config.plugin_sets import merge_plugin_set
from scheduler.framework import PluginSpec

DEFAULT_SCORE = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("InterPodAffinity", 2),
    ("ImageLocality", 1),
]
DEFAULT_FILTER = [
    "NodeUnschedulable",
    "TaintToleration",
    "NodeAffinity",
    "NodeResourcesFit",
    "InterPodAffinity",
]


def load_profile(registry: dict[str, PluginSpec], plugins: dict[str, Any]) -> EffectiveProfile:
    data = {"apiVersion": API_VERSION, "kind": KIND, "profiles": [{"plugins": plugins}]}
    _, [profile] = load_config_dict(data, registry)
    return profile


def enable(*entries: str | tuple[str, int]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    for entry in entries:
        if isinstance(entry, tuple):
            result.append({"name": entry[0], "weight": entry[1]})
        else:
            result.append({"name": entry})
    return result


SCORE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, int]]]] = [
    ("defaults", {}, DEFAULT_SCORE),
    ("disable-all-at-score", {"score": {"disabled": enable("*")}}, []),
    (
        "disable-one-at-score",
        {"score": {"disabled": enable("NodeAffinity")}},
        [p for p in DEFAULT_SCORE if p[0] != "NodeAffinity"],
    ),
    (
        "multi-point-reweights-default-in-place",
        {"multiPoint": {"enabled": enable(("NodeAffinity", 7))}},
        [(n, 7 if n == "NodeAffinity" else w) for n, w in DEFAULT_SCORE],
    ),
    (
        "multi-point-replacement-without-weight-means-1",
        {"multiPoint": {"enabled": enable("TaintToleration")}},
        [(n, 1 if n == "TaintToleration" else w) for n, w in DEFAULT_SCORE],
    ),
    (
        "multi-point-new-plugin-appended",
        {"multiPoint": {"enabled": enable(("CustomScore", 4))}},
        [*DEFAULT_SCORE, ("CustomScore", 4)],
    ),
    (
        "specific-point-new-plugin-runs-after-multi-point",
        {"score": {"enabled": enable(("CustomScore", 5))}},
        [*DEFAULT_SCORE, ("CustomScore", 5)],
    ),
    (
        "specific-point-override-runs-first-with-its-weight",
        {"score": {"enabled": enable(("ImageLocality", 9))}},
        [("ImageLocality", 9), *DEFAULT_SCORE[:-1]],
    ),
    (
        "specific-point-weight-0-means-1-not-the-multi-point-weight",
        {"score": {"enabled": enable(("InterPodAffinity", 0))}},
        [("InterPodAffinity", 1), *[p for p in DEFAULT_SCORE if p[0] != "InterPodAffinity"]],
    ),
    (
        "specific-weight-beats-user-multi-point-weight",
        {
            "multiPoint": {"enabled": enable(("NodeAffinity", 7))},
            "score": {"enabled": enable(("NodeAffinity", 5))},
        },
        [("NodeAffinity", 5), *[p for p in DEFAULT_SCORE if p[0] != "NodeAffinity"]],
    ),
    (
        "overrides-then-multi-point-then-other-specific",
        {"score": {"enabled": enable(("CustomScore", 5), ("ImageLocality", 4))}},
        [("ImageLocality", 4), *DEFAULT_SCORE[:-1], ("CustomScore", 5)],
    ),
    (
        "disable-all-then-enable-keeps-user-order",
        {"score": {"disabled": enable("*"), "enabled": enable("ImageLocality", "CustomScore")}},
        [("ImageLocality", 1), ("CustomScore", 1)],
    ),
    (
        "multi-point-disable-all-keeps-only-user-multi-point",
        {
            "multiPoint": {
                "disabled": enable("*"),
                "enabled": enable("PrioritySort", "DefaultBinder", ("CustomScore", 6)),
            }
        },
        [("CustomScore", 6)],
    ),
]


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [case[1:] for case in SCORE_CASES],
    ids=[case[0] for case in SCORE_CASES],
)
def test_score_chain(
    registry: dict[str, PluginSpec], plugins: dict[str, Any], expected: list[tuple[str, int]]
) -> None:
    profile = load_profile(registry, plugins)
    assert [(ref.name, ref.weight) for ref in profile.plugins["Score"]] == expected


CHAIN_CASES: list[tuple[str, dict[str, Any], str, list[str]]] = [
    (
        "disable-name-at-one-point-only",
        {"filter": {"disabled": enable("TaintToleration")}},
        "Filter",
        [n for n in DEFAULT_FILTER if n != "TaintToleration"],
    ),
    (
        "disable-all-at-filter-then-enable-in-user-order",
        {
            "filter": {
                "disabled": enable("*"),
                "enabled": enable("CustomFilter", "NodeUnschedulable"),
            }
        },
        "Filter",
        ["CustomFilter", "NodeUnschedulable"],
    ),
    (
        "disabled-and-re-enabled-at-a-point-moves-to-the-end",
        {"filter": {"disabled": enable("TaintToleration"), "enabled": enable("TaintToleration")}},
        "Filter",
        [*[n for n in DEFAULT_FILTER if n != "TaintToleration"], "TaintToleration"],
    ),
    (
        "multi-point-disable-name-removes-it-everywhere",
        {"multiPoint": {"disabled": enable("NodeAffinity")}},
        "PreFilter",
        ["NodeResourcesFit", "InterPodAffinity"],
    ),
    (
        "replace-queue-sort",
        {"queueSort": {"disabled": enable("*"), "enabled": enable("CustomSort")}},
        "QueueSort",
        ["CustomSort"],
    ),
    (
        "specific-point-plugin-only-at-that-point",
        {"reserve": {"enabled": enable("CustomReserve")}},
        "Permit",
        [],
    ),
    (
        "multi-point-plugin-at-every-point-it-implements",
        {"multiPoint": {"enabled": enable("CustomReserve")}},
        "Permit",
        ["CustomReserve"],
    ),
    (
        "multi-point-plugin-disabled-at-one-point",
        {
            "multiPoint": {"enabled": enable("CustomReserve")},
            "permit": {"disabled": enable("CustomReserve")},
        },
        "Reserve",
        ["CustomReserve"],
    ),
    (
        "multi-point-plugin-disabled-at-one-point-is-gone-there",
        {
            "multiPoint": {"enabled": enable("CustomReserve")},
            "permit": {"disabled": enable("CustomReserve")},
        },
        "Permit",
        [],
    ),
    (
        "second-binder-after-default",
        {"bind": {"enabled": enable("CustomBinder")}},
        "Bind",
        ["DefaultBinder", "CustomBinder"],
    ),
]


@pytest.mark.parametrize(
    ("plugins", "point", "expected"),
    [case[1:] for case in CHAIN_CASES],
    ids=[case[0] for case in CHAIN_CASES],
)
def test_chain(
    registry: dict[str, PluginSpec], plugins: dict[str, Any], point: str, expected: list[str]
) -> None:
    profile = load_profile(registry, plugins)
    assert [ref.name for ref in profile.plugins[point]] == expected


def test_weights_outside_score_resolve_to_zero(registry: dict[str, PluginSpec]) -> None:
    profile = load_profile(
        registry,
        {
            "filter": {"enabled": enable(("CustomFilter", 5))},
            "multiPoint": {"enabled": enable(("TaintToleration", 4))},
        },
    )
    assert {ref.weight for point in ("Filter", "PreScore") for ref in profile.plugins[point]} == {0}
    assert ("TaintToleration", 4) in [(r.name, r.weight) for r in profile.plugins["Score"]]


def test_plugin_disabled_at_all_its_points_is_still_instantiated(
    registry: dict[str, PluginSpec],
) -> None:
    # Upstream builds every plugin enabled in multiPoint, even one no point runs.
    profile = load_profile(registry, {"score": {"disabled": enable("ImageLocality")}})
    assert all(ref.name != "ImageLocality" for refs in profile.plugins.values() for ref in refs)
    assert "ImageLocality" in profile.plugin_args


def test_multi_point_disabled_plugin_is_not_instantiated(registry: dict[str, PluginSpec]) -> None:
    profile = load_profile(registry, {"multiPoint": {"disabled": enable("NodeAffinity")}})
    assert "NodeAffinity" not in profile.plugin_args
    assert all(ref.name != "NodeAffinity" for refs in profile.plugins.values() for ref in refs)


def named(*entries: str | tuple[str, int]) -> list[Plugin]:
    return [
        Plugin(name=e[0], weight=e[1]) if isinstance(e, tuple) else Plugin(name=e) for e in entries
    ]


MERGE_CASES: list[tuple[str, PluginSet, PluginSet, list[Plugin], list[str]]] = [
    ("empty-custom", PluginSet(enabled=named("A", "B")), PluginSet(), named("A", "B"), []),
    (
        "replace-in-place-keeps-default-order",
        PluginSet(enabled=named(("A", 1), ("B", 2), ("C", 3))),
        PluginSet(enabled=named("D", ("B", 9))),
        named(("A", 1), ("B", 9), ("C", 3), "D"),
        [],
    ),
    (
        "disable-name",
        PluginSet(enabled=named("A", "B")),
        PluginSet(disabled=named("A")),
        named("B"),
        ["A"],
    ),
    (
        "disable-all-keeps-user-plugins",
        PluginSet(enabled=named("A", "B")),
        PluginSet(enabled=named("B", "C"), disabled=named("*")),
        named("B", "C"),
        ["*"],
    ),
    (
        "disabled-default-re-enabled-is-appended",
        PluginSet(enabled=named("A", "B")),
        PluginSet(enabled=named("A"), disabled=named("A")),
        named("B", "A"),
        ["A"],
    ),
]


@pytest.mark.parametrize(
    ("defaults", "custom", "enabled", "disabled"),
    [case[1:] for case in MERGE_CASES],
    ids=[case[0] for case in MERGE_CASES],
)
def test_merge_plugin_set(
    defaults: PluginSet, custom: PluginSet, enabled: list[Plugin], disabled: list[str]
) -> None:
    merged = merge_plugin_set(defaults, custom)
    assert merged.enabled == enabled
    assert [plugin.name for plugin in merged.disabled] == disabled


def test_merging_a_merged_set_again_changes_nothing() -> None:
    defaults = PluginSet(enabled=named(("A", 1), "B", "C"))
    custom = PluginSet(enabled=named("D", ("A", 3)), disabled=named("B"))
    once = merge_plugin_set(defaults, custom)
    assert merge_plugin_set(defaults, once) == once
