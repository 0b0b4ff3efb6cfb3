"""FieldErrors: every args problem at once, with its path and Kubernetes' wording."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from scheduler.framework.field_errors import FieldErrors


def test_no_problem_raises_nothing() -> None:
    errors = FieldErrors()
    assert not errors
    errors.raise_if_any("Args")


def test_every_problem_is_reported_once_with_its_path() -> None:
    errors = FieldErrors()
    errors.invalid(("weight",), -1, "must be positive")
    errors.not_supported(("scoringStrategy", "type"), "Fancy", ["LeastAllocated", "MostAllocated"])
    errors.required(("resources",), "at least one resource")
    errors.forbidden(("shape", 0), [1], "only with RequestedToCapacityRatio")
    errors.duplicate(("resources", 1, "name"), "cpu")
    assert errors
    with pytest.raises(ValidationError) as caught:
        errors.raise_if_any("NodeResourcesFitArgs")
    assert caught.value.title == "NodeResourcesFitArgs"
    assert [(e["loc"], e["msg"]) for e in caught.value.errors()] == [
        (("weight",), "Invalid value: -1: must be positive"),
        (
            ("scoringStrategy", "type"),
            'Unsupported value: "Fancy": supported values: "LeastAllocated", "MostAllocated"',
        ),
        (("resources",), "Required value: at least one resource"),
        (("shape", 0), "Forbidden: only with RequestedToCapacityRatio"),
        (("resources", 1, "name"), 'Duplicate value: "cpu"'),
    ]


def test_a_message_with_braces_is_kept_as_written() -> None:
    errors = FieldErrors()
    errors.invalid(("selector",), "{a}", "not a {template}")
    with pytest.raises(ValidationError) as caught:
        errors.raise_if_any("Args")
    assert caught.value.errors()[0]["msg"] == 'Invalid value: "{a}": not a {template}'


@pytest.mark.parametrize(
    ("value", "shown"),
    [(["a", "b"], '["a","b"]'), ([], "[]"), (None, "null"), ({1, 2} - {1, 2}, "set()")],
)
def test_values_that_are_not_scalars_show_as_go_prints_them(value: object, shown: str) -> None:
    # Go's field errors print such values as compact JSON; what JSON cannot hold, as Python.
    errors = FieldErrors()
    errors.invalid(("items",), value, "must be empty")
    with pytest.raises(ValidationError) as caught:
        errors.raise_if_any("Args")
    assert caught.value.errors()[0]["msg"] == f"Invalid value: {shown}: must be empty"
