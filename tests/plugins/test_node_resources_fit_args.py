"""NodeResourcesFitArgs: upstream defaults, and validation errors that name the field path."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from pydantic import ValidationError

from plugins.node_resources_fit import NodeResourcesFitArgs


def test_defaults() -> None:
    args = NodeResourcesFitArgs()
    assert args.ignored_resources == ()
    assert args.ignored_resource_groups == ()
    assert args.scoring_strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in args.scoring_strategy.resources] == [
        ("cpu", 1),
        ("memory", 1),
    ]
    assert args.scoring_strategy.requested_to_capacity_ratio is None


def test_camel_case_fields_and_defaulting() -> None:
    args = NodeResourcesFitArgs.model_validate(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "NodeResourcesFitArgs",
            "ignoredResources": ["example.com/gpu"],
            "ignoredResourceGroups": ["example.com"],
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "cpu", "weight": 0}, {"name": "example.com/gpu"}],
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            },
        }
    )
    assert args.ignored_resources == ("example.com/gpu",)
    assert args.ignored_resource_groups == ("example.com",)
    strategy = args.scoring_strategy
    # weight 0 or unset means 1, as upstream's defaulting does
    assert [(r.name, r.weight) for r in strategy.resources] == [("cpu", 1), ("example.com/gpu", 1)]
    assert [(p.utilization, p.score) for p in strategy.shape] == [(0, 0), (100, 10)]


def test_empty_resources_fall_back_to_cpu_and_memory() -> None:
    args = NodeResourcesFitArgs.model_validate(
        {"scoringStrategy": {"type": "MostAllocated", "resources": []}}
    )
    assert [r.name for r in args.scoring_strategy.resources] == ["cpu", "memory"]


def _errors(
    raw: dict[str, Any], model: type[BaseModel] = NodeResourcesFitArgs
) -> list[tuple[tuple[Any, ...], str]]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(raw)
    return [(tuple(e["loc"]), e["msg"]) for e in caught.value.errors()]


INVALID = [
    (
        "unknown strategy type",
        {"scoringStrategy": {"type": "Spread"}},
        ("scoringStrategy", "type"),
        'Unsupported value: "Spread": supported values: "LeastAllocated", "MostAllocated", '
        '"RequestedToCapacityRatio"',
    ),
    (
        "a given strategy needs its type",
        {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
        ("scoringStrategy", "type"),
        'Unsupported value: ""',
    ),
    (
        "negative weight",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "memory", "weight": -1}],
            }
        },
        ("scoringStrategy", "resources", 0, "weight"),
        "Invalid value: -1: resource weight of memory not in valid range (0, 100]",
    ),
    (
        "weight above 100",
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}],
            }
        },
        ("scoringStrategy", "resources", 1, "weight"),
        "Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
    ),
    (
        "shape required by RequestedToCapacityRatio",
        {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {}}},
        ("scoringStrategy", "requestedToCapacityRatio", "shape"),
        "Required value: at least one point must be specified",
    ),
    (
        "shape not increasing",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]
                },
            }
        },
        ("scoringStrategy", "requestedToCapacityRatio", "shape", 1, "utilization"),
        "Invalid value: 50: values must be sorted in increasing order",
    ),
    (
        "shape utilization out of range",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 1}]},
            }
        },
        ("scoringStrategy", "requestedToCapacityRatio", "shape", 0, "utilization"),
        "Invalid value: 101: not in valid range [0, 100]",
    ),
    (
        "shape score out of range",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 10, "score": 11}]},
            }
        },
        ("scoringStrategy", "requestedToCapacityRatio", "shape", 0, "score"),
        "Invalid value: 11: not in valid range [0, 10]",
    ),
    (
        "resource group with a slash",
        {"ignoredResourceGroups": ["example.com/gpu"]},
        ("ignoredResourceGroups", 0),
        "Invalid value: \"example.com/gpu\": resource group name can't contain '/'",
    ),
    (
        "ignored resource that is not a qualified name",
        {"ignoredResources": ["-bad-"]},
        ("ignoredResources", 0),
        'Invalid value: "-bad-": name part must consist of alphanumeric characters',
    ),
    (
        "ignored resource with an empty prefix",
        {"ignoredResources": ["/gpu"]},
        ("ignoredResources", 0),
        'Invalid value: "/gpu": prefix part must be non-empty',
    ),
    (
        "ignored resource with two slashes",
        {"ignoredResources": ["example.com/a/b"]},
        ("ignoredResources", 0),
        'Invalid value: "example.com/a/b": a valid label key must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
        "and '/' (e.g. 'example.com/MyName')",
    ),
    (
        "ratio given for another type",
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}]},
            }
        },
        ("scoringStrategy", "requestedToCapacityRatio"),
        "Forbidden: must be nil when type is not RequestedToCapacityRatio",
    ),
    (
        "ratio type without a ratio",
        {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
        ("scoringStrategy", "requestedToCapacityRatio"),
        "Required value: must be specified when type is RequestedToCapacityRatio",
    ),
    (
        "unknown field",
        {"scoringStrategy": {"type": "LeastAllocated", "weights": []}},
        ("scoringStrategy", "weights"),
        "Extra inputs are not permitted",
    ),
]


@pytest.mark.parametrize(
    ("raw", "loc", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_args_name_their_field(
    raw: dict[str, Any], loc: tuple[Any, ...], message: str
) -> None:
    errors = _errors(raw)
    assert [e for e in errors if e[0] == loc and e[1].startswith(message)], errors


def test_every_problem_is_reported_at_once() -> None:
    errors = _errors(
        {
            "ignoredResourceGroups": ["a/b"],
            "scoringStrategy": {
                "type": "Nope",
                "resources": [{"name": "cpu", "weight": 200}],
            },
        }
    )
    assert [loc for loc, _ in errors] == [
        ("ignoredResourceGroups", 0),
        ("scoringStrategy", "type"),
        ("scoringStrategy", "resources", 0, "weight"),
    ]


class _Profile(BaseModel):
    args: NodeResourcesFitArgs


def test_errors_nest_under_an_enclosing_config_path() -> None:
    errors = _errors({"args": {"scoringStrategy": {"type": "Nope"}}}, _Profile)
    assert [loc for loc, _ in errors] == [("args", "scoringStrategy", "type")]


def test_args_are_immutable() -> None:
    args = NodeResourcesFitArgs()
    with pytest.raises(ValidationError):
        args.scoring_strategy.type = "MostAllocated"  # type: ignore[misc]


def test_nulls_inside_nested_args_get_the_zero_value() -> None:
    # Upstream's non-pointer fields keep their zero value on a null, then get defaulted.
    ratio = {"shape": [{"utilization": None, "score": 10}, {"utilization": 50, "score": None}]}
    args = NodeResourcesFitArgs.model_validate(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "cpu", "weight": None}],
                "requestedToCapacityRatio": ratio,
            }
        }
    )
    strategy = args.scoring_strategy
    assert [(r.name, r.weight) for r in strategy.resources] == [("cpu", 1)]
    assert [(p.utilization, p.score) for p in strategy.shape] == [(0, 10), (50, 0)]


def test_a_null_ratio_is_no_ratio() -> None:
    args = NodeResourcesFitArgs.model_validate(
        {"scoringStrategy": {"type": "MostAllocated", "requestedToCapacityRatio": None}}
    )
    assert args.scoring_strategy.requested_to_capacity_ratio is None
