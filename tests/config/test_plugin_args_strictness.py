"""Plugin args are as strict as upstream's Go types: no coercion, and every integer has a width.

Each case goes through the whole configuration loader with the in-tree plugins, so the error
must name the field's full path inside the configuration.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

import pytest
from pydantic import ValidationError

from scheduler.config import API_VERSION
from scheduler.config import KIND
from scheduler.config import ConfigError
from scheduler.config import load_config_dict
from scheduler.framework import PluginArgs
from scheduler.framework import PluginSpec

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
ARGS = "profiles[0].pluginConfig[0].args"
AFFINITY_TERM = (
    f"{ARGS}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
)


@pytest.fixture(scope="module")
def in_tree() -> dict[str, PluginSpec]:
    return {entry.name: entry.load() for entry in entry_points(group="kube_pyscheduler.plugins")}


def _load(plugin: str, args: dict[str, Any], registry: dict[str, PluginSpec]) -> None:
    config = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "profiles": [{"pluginConfig": [{"name": plugin, "args": args}]}],
    }
    load_config_dict(config, registry)


def _strategy(**fields: Any) -> dict[str, Any]:
    return {"scoringStrategy": {"type": "LeastAllocated", **fields}}


def _shape(utilization: int, score: int) -> dict[str, Any]:
    ratio = {"shape": [{"utilization": utilization, "score": score}]}
    return {
        "scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": ratio}
    }


def _constraint(**fields: Any) -> dict[str, Any]:
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    return {"defaultingType": "List", "defaultConstraints": [{**constraint, **fields}]}


REFUSED = [
    ("InterPodAffinity", {"hardPodAffinityWeight": True}, "hardPodAffinityWeight", "integer"),
    ("InterPodAffinity", {"hardPodAffinityWeight": "5"}, "hardPodAffinityWeight", "integer"),
    ("InterPodAffinity", {"hardPodAffinityWeight": 5.0}, "hardPodAffinityWeight", "integer"),
    (
        "InterPodAffinity",
        {"ignorePreferredTermsOfExistingPods": "yes"},
        "ignorePreferredTermsOfExistingPods",
        "boolean",
    ),
    (
        "InterPodAffinity",
        {"ignorePreferredTermsOfExistingPods": 1},
        "ignorePreferredTermsOfExistingPods",
        "boolean",
    ),
    (
        "DefaultPreemption",
        {"minCandidateNodesAbsolute": INT32_MAX + 1},
        "minCandidateNodesAbsolute",
        f"less than or equal to {INT32_MAX}",
    ),
    (
        "DefaultPreemption",
        {"minCandidateNodesPercentage": -(2**31) - 1},
        "minCandidateNodesPercentage",
        "greater than or equal to",
    ),
    (
        "NodeResourcesFit",
        _shape(INT32_MAX + 1, 1),
        "scoringStrategy.requestedToCapacityRatio.shape[0].utilization",
        f"less than or equal to {INT32_MAX}",
    ),
    (
        "NodeResourcesFit",
        _shape(10, True),
        "scoringStrategy.requestedToCapacityRatio.shape[0].score",
        "integer",
    ),
    (
        "NodeResourcesFit",
        _strategy(resources=[{"name": "cpu", "weight": INT64_MAX + 1}]),
        "scoringStrategy.resources[0].weight",
        f"less than or equal to {INT64_MAX}",
    ),
    ("NodeResourcesFit", {"ignoredResources": "cpu"}, "ignoredResources", "tuple"),
    ("NodeResourcesFit", {"ignoredResources": [7]}, "ignoredResources[0]", "string"),
    (
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu", "weight": True}]},
        "resources[0].weight",
        "integer",
    ),
    (
        "PodTopologySpread",
        _constraint(maxSkew="1"),
        "defaultConstraints[0].maxSkew",
        "integer",
    ),
    (
        "PodTopologySpread",
        _constraint(minDomains=INT32_MAX + 1),
        "defaultConstraints[0].minDomains",
        f"less than or equal to {INT32_MAX}",
    ),
    (
        "VolumeBinding",
        {"bindTimeoutSeconds": INT64_MAX + 1},
        "bindTimeoutSeconds",
        f"less than or equal to {INT64_MAX}",
    ),
    ("VolumeBinding", {"bindTimeoutSeconds": "600"}, "bindTimeoutSeconds", "integer"),
]


@pytest.mark.parametrize(
    ("plugin", "args", "field", "detail"),
    REFUSED,
    ids=[f"{plugin}-{field}-{i}" for i, (plugin, _, field, _) in enumerate(REFUSED)],
)
def test_a_value_of_the_wrong_type_or_width_is_refused_naming_its_path(
    plugin: str, args: dict[str, Any], field: str, detail: str, in_tree: dict[str, PluginSpec]
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(plugin, args, in_tree)
    lines = str(caught.value).splitlines()
    assert any(line.startswith(f"{ARGS}.{field}: ") and detail in line for line in lines), lines


@pytest.mark.parametrize(
    ("plugin", "args"),
    [
        ("InterPodAffinity", {"hardPodAffinityWeight": 100}),
        ("DefaultPreemption", {"minCandidateNodesAbsolute": INT32_MAX}),
        ("NodeResourcesFit", {"ignoredResources": ["example.com/gpu"]}),
        ("NodeResourcesFit", _shape(100, 10)),
        ("VolumeBinding", {"bindTimeoutSeconds": INT64_MAX}),
        ("PodTopologySpread", _constraint(minDomains=INT32_MAX)),
    ],
)
def test_values_upstream_accepts_still_load(
    plugin: str, args: dict[str, Any], in_tree: dict[str, PluginSpec]
) -> None:
    _load(plugin, args, in_tree)


class _OutOfTreeArgs(PluginArgs):
    """Args as an out-of-tree plugin might write them, with plain Python types."""

    count: int = 0
    ratio: float = 0.5
    names: tuple[str, ...] = ()


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        ({"count": INT64_MAX + 1}, "must fit in a 64-bit integer"),
        ({"count": -(2**63) - 1}, "must fit in a 64-bit integer"),
        ({"count": False}, "valid integer"),
        ({"ratio": float("inf")}, "must be a finite number"),
        ({"ratio": float("nan")}, "must be a finite number"),
        ({"ratio": "0.5"}, "valid number"),
        ({"names": "a"}, "valid tuple"),
    ],
)
def test_the_rule_covers_every_plugin_s_args(data: dict[str, Any], detail: str) -> None:
    with pytest.raises(ValidationError, match=detail):
        _OutOfTreeArgs.model_validate(data)


def test_lists_read_from_files_fill_tuple_fields() -> None:
    args = _OutOfTreeArgs.model_validate({"count": INT64_MAX, "ratio": 1, "names": ["a", "b"]})
    assert args == _OutOfTreeArgs(count=INT64_MAX, ratio=1.0, names=("a", "b"))


# A null field is unset, as it is for upstream's pointers; for upstream's other fields a null
# leaves the zero value, which defaulting then treats as unset too.
NULL_MEANS_UNSET = [
    ("InterPodAffinity", {"hardPodAffinityWeight": None}),
    ("InterPodAffinity", {"ignorePreferredTermsOfExistingPods": None}),
    ("DynamicResources", {"filterTimeout": None, "bindingTimeout": None}),
    ("NodeResourcesFit", {"scoringStrategy": None}),
    ("NodeResourcesFit", {"ignoredResources": None, "ignoredResourceGroups": None}),
    ("NodeResourcesBalancedAllocation", {"resources": None}),
    ("DefaultPreemption", {"minCandidateNodesPercentage": None}),
    ("DefaultPreemption", {"minCandidateNodesAbsolute": None}),
    ("VolumeBinding", {"bindTimeoutSeconds": None}),
    ("VolumeBinding", {"shape": None}),
    ("PodTopologySpread", {"defaultingType": None, "defaultConstraints": None}),
    ("NodeAffinity", {"addedAffinity": None}),
]


@pytest.mark.parametrize(
    ("plugin", "args"),
    NULL_MEANS_UNSET,
    ids=[f"{plugin}-{'-'.join(args)}" for plugin, args in NULL_MEANS_UNSET],
)
def test_a_null_field_gets_the_default(
    plugin: str, args: dict[str, Any], in_tree: dict[str, PluginSpec]
) -> None:
    model = in_tree[plugin].args_model
    assert model is not None
    assert model.model_validate(args) == model()
    _load(plugin, args, in_tree)


@pytest.mark.parametrize(
    ("plugin", "args", "expected"),
    [
        (
            # A null type is the empty type, which upstream refuses as it refuses a missing one.
            "NodeResourcesFit",
            {"scoringStrategy": {"type": None}},
            f'{ARGS}.scoringStrategy.type: Unsupported value: "": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        (
            "NodeResourcesFit",
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": None},
                }
            },
            f"{ARGS}.scoringStrategy.requestedToCapacityRatio.shape: "
            "Required value: at least one point must be specified",
        ),
    ],
    ids=["fit-type", "fit-shape"],
)
def test_a_null_field_is_checked_as_its_zero_value(
    plugin: str, args: dict[str, Any], expected: str, in_tree: dict[str, PluginSpec]
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(plugin, args, in_tree)
    assert str(caught.value).splitlines() == [expected]


@pytest.mark.parametrize(
    ("plugin", "args", "expected"),
    [
        (
            "InterPodAffinity",
            {"hardPodAffinityWeight": 101},
            f"{ARGS}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            "DynamicResources",
            {"filterTimeout": "-1s", "bindingTimeout": "500ms"},
            f'{ARGS}.filterTimeout: Invalid value: "-1s": must be zero or positive\n'
            f'{ARGS}.bindingTimeout: Invalid value: "500ms": must be at least 1 second',
        ),
        (
            "NodeResourcesFit",
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}]},
                }
            },
            f"{ARGS}.scoringStrategy.requestedToCapacityRatio: "
            "Forbidden: must be nil when type is not RequestedToCapacityRatio",
        ),
        (
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            f"{ARGS}.scoringStrategy.requestedToCapacityRatio: "
            "Required value: must be specified when type is RequestedToCapacityRatio",
        ),
        (
            "VolumeBinding",
            {"shape": [{"utilization": 0, "score": 10}]},
            f'{ARGS}.shape: Invalid value: [{{"Utilization":0,"Score":10}}]: unexpected field '
            "`shape`, remove it or turn on the feature gate StorageCapacityScoring",
        ),
        (
            "VolumeBinding",
            {"shape": []},
            f"{ARGS}.shape: Invalid value: []: unexpected field "
            "`shape`, remove it or turn on the feature gate StorageCapacityScoring",
        ),
        (
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "In", "values": ["a b"]},
                                    {"key": "n", "operator": "Gt", "values": ["x", "2"]},
                                ],
                                "matchFields": [{"key": "metadata.name", "operator": "Exists"}],
                            }
                        ]
                    }
                }
            },
            f'{AFFINITY_TERM}.matchExpressions[0].values[0][zone]: Invalid value: "a b": a valid '
            "label must be an empty string or consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
            "'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')\n"
            f'{AFFINITY_TERM}.matchExpressions[1].values: Invalid value: ["x","2"]: '
            "for 'Gt', 'Lt' operators, exactly one value is required\n"
            f'{AFFINITY_TERM}.matchExpressions[1].values[0]: Invalid value: "x": '
            "for 'Gt', 'Lt' operators, the value must be an integer\n"
            f'{AFFINITY_TERM}.matchFields[0].operator: Unsupported value: "Exists": '
            'supported values: "In", "NotIn"',
        ),
    ],
    ids=[
        "ipa-weight",
        "dra-timeouts",
        "fit-ratio-forbidden",
        "fit-ratio-required",
        "vb-shape",
        "vb-empty-shape",
        "node-affinity-selector",
    ],
)
def test_args_problems_read_as_upstream_s(
    plugin: str, args: dict[str, Any], expected: str, in_tree: dict[str, PluginSpec]
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(plugin, args, in_tree)
    assert str(caught.value) == expected
