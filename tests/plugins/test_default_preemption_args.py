"""DefaultPreemptionArgs: defaults, validation with field paths, and the candidate count."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from plugins.default_preemption import SPEC
from plugins.default_preemption import DefaultPreemption
from plugins.default_preemption import DefaultPreemptionArgs
from plugins.default_preemption.args import num_candidates
from scheduler.runtime.discovery import PluginRegistry


def test_defaults_are_upstreams() -> None:
    args = DefaultPreemptionArgs()
    assert args.min_candidate_nodes_percentage == 10
    assert args.min_candidate_nodes_absolute == 100


def test_reads_camel_case_and_rejects_unknown_fields() -> None:
    args = DefaultPreemptionArgs.model_validate(
        {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": 5}
    )
    assert (args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute) == (20, 5)
    with pytest.raises(ValidationError):
        DefaultPreemptionArgs.model_validate({"minCandidateNodes": 1})


@pytest.mark.parametrize(
    ("raw", "errors"),
    [
        pytest.param(
            {"minCandidateNodesPercentage": 101},
            [("minCandidateNodesPercentage", "Invalid value: 101: not in valid range [0, 100]")],
            id="percentage-too-high",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": -1},
            [("minCandidateNodesPercentage", "Invalid value: -1: not in valid range [0, 100]")],
            id="percentage-negative",
        ),
        pytest.param(
            {"minCandidateNodesAbsolute": -1},
            [("minCandidateNodesAbsolute", "Invalid value: -1: not in valid range [0, inf)")],
            id="absolute-negative",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            [
                (
                    "minCandidateNodesPercentage",
                    "Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesAbsolute",
                ),
                (
                    "minCandidateNodesAbsolute",
                    "Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesPercentage",
                ),
            ],
            id="both-zero",
        ),
    ],
)
def test_validation_names_each_field(raw: dict[str, Any], errors: list[tuple[str, str]]) -> None:
    with pytest.raises(ValidationError) as caught:
        DefaultPreemptionArgs.model_validate(raw)
    assert [(str(e["loc"][0]), e["msg"]) for e in caught.value.errors()] == errors


@pytest.mark.parametrize(
    ("nodes", "percentage", "absolute", "expected"),
    [
        (5000, 10, 100, 500),
        (1000, 10, 100, 100),
        (50, 10, 100, 50),
        (999, 10, 0, 99),
        (1000, 0, 1, 1),
        (7, 100, 0, 7),
        (1, 10, 100, 1),
    ],
)
def test_number_of_candidates(nodes: int, percentage: int, absolute: int, expected: int) -> None:
    args = DefaultPreemptionArgs(
        min_candidate_nodes_percentage=percentage, min_candidate_nodes_absolute=absolute
    )
    assert num_candidates(args, nodes) == expected


def test_spec_describes_the_plugin() -> None:
    assert SPEC.name == "DefaultPreemption"
    assert SPEC.plugin_class is DefaultPreemption
    assert SPEC.args_model is DefaultPreemptionArgs
    assert SPEC.watches == ("poddisruptionbudgets",)
    assert SPEC.extension_points == ["PreEnqueue", "PostFilter"]
    registry = PluginRegistry(specs=[SPEC])
    assert registry["DefaultPreemption"] is SPEC
