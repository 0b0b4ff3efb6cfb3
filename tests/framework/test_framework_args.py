"""ArgsModel and PluginArgs: the one strictness every plugin's args share."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from scheduler.framework import PluginArgs
from scheduler.framework.args import INT32_MAX
from scheduler.framework.args import INT64_MAX
from scheduler.framework.args import ArgsModel
from scheduler.framework.args import Int32


class _Shape(ArgsModel):
    utilization: int
    score: int


class _ExampleArgs(PluginArgs):
    batch_size: int = 1
    weight: float = 1.0
    enabled: bool = False
    limit: Int32 = 0
    shape: tuple[_Shape, ...] = ()
    names: tuple[str, ...] = ()


def test_fields_are_camel_case_in_files_and_snake_case_in_python() -> None:
    args = _ExampleArgs.model_validate({"batchSize": 3})
    assert args.batch_size == 3
    assert _ExampleArgs.model_validate({"batch_size": 4}).batch_size == 4


def test_an_unknown_field_is_rejected_by_name() -> None:
    with pytest.raises(ValidationError, match="batchSise"):
        _ExampleArgs.model_validate({"batchSise": 3})


@pytest.mark.parametrize(
    ("field", "value"),
    [("batchSize", "5"), ("batchSize", True), ("enabled", "yes"), ("enabled", 1)],
)
def test_values_are_not_coerced_between_types(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=field):
        _ExampleArgs.model_validate({field: value})


def test_lists_from_files_fill_tuple_fields_nested_ones_too() -> None:
    args = _ExampleArgs.model_validate(
        {"names": ["a", "b"], "shape": [{"utilization": 0, "score": 10}]}
    )
    assert args.names == ("a", "b")
    assert args.shape == (_Shape(utilization=0, score=10),)


def test_integers_keep_their_go_width() -> None:
    assert _ExampleArgs.model_validate({"batchSize": INT64_MAX}).batch_size == INT64_MAX
    with pytest.raises(ValidationError, match="must fit in a 64-bit integer"):
        _ExampleArgs.model_validate({"batchSize": INT64_MAX + 1})
    assert _ExampleArgs.model_validate({"limit": INT32_MAX}).limit == INT32_MAX
    with pytest.raises(ValidationError, match="limit"):
        _ExampleArgs.model_validate({"limit": INT32_MAX + 1})


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_floats_must_be_finite(value: float) -> None:
    with pytest.raises(ValidationError, match="must be a finite number"):
        _ExampleArgs.model_validate({"weight": value})


def test_args_are_immutable_once_built() -> None:
    args = _ExampleArgs()
    with pytest.raises(ValidationError):
        args.batch_size = 2  # type: ignore[misc]


def test_type_meta_in_a_file_is_accepted_and_left_out_of_a_dump() -> None:
    args = _ExampleArgs.model_validate(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "X"}
    )
    assert (args.api_version, args.kind) == ("kubescheduler.config.k8s.io/v1", "X")
    dumped = args.model_dump(by_alias=True)
    assert "apiVersion" not in dumped and "kind" not in dumped
