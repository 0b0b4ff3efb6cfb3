"""Qualified names and Go-width integers, checked in the API server's words."""

from __future__ import annotations

import pytest

from scheduler.objects.integers import bounded_int
from scheduler.objects.names import label_value_problems
from scheduler.objects.names import qualified_name_problems
from scheduler.objects.names import subdomain_problems


@pytest.mark.parametrize("name", ["app", "example.com/My_Name-1", "a", "k8s.io/x.y"])
def test_valid_qualified_names(name: str) -> None:
    assert qualified_name_problems(name) == []


def test_an_empty_name_part_is_reported_twice_as_upstream_does() -> None:
    problems = qualified_name_problems("example.com/")
    assert problems[0] == "name part must be non-empty"
    assert problems[1].startswith("name part must consist of alphanumeric characters")


def test_a_name_part_longer_than_63_characters() -> None:
    assert "name part must be no more than 63 characters" in qualified_name_problems("a" * 64)


def test_a_bad_prefix_and_too_many_slashes() -> None:
    assert qualified_name_problems("/x") == ["prefix part must be non-empty"]
    assert qualified_name_problems("Example.com/x")[0].startswith(
        "prefix part a lowercase RFC 1123 subdomain"
    )
    assert qualified_name_problems("a/b/c")[0].startswith("a valid label key must consist of")


@pytest.mark.parametrize("value", ["app\n", "example.com\n/app", "example.com/app\n"])
def test_a_trailing_newline_is_no_name(value: str) -> None:
    assert qualified_name_problems(value) != []


def test_a_trailing_newline_is_no_label_value() -> None:
    assert label_value_problems("v1") == []
    assert label_value_problems("v1\n") != []
    assert subdomain_problems("example.com\n") != []


def test_subdomains() -> None:
    assert subdomain_problems("example.com") == []
    assert subdomain_problems("-bad") != []
    assert "must be no more than 253 characters" in subdomain_problems("a" * 254)


def test_bounded_int_accepts_what_fits() -> None:
    assert bounded_int("42", 32, "spec.priority") == 42
    assert bounded_int(-(2**31), 32, "spec.priority") == -(2**31)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (2**31, "spec.priority: 2147483648 does not fit in an int32"),
        ("high", "spec.priority: 'high' is not an integer"),
        (float("inf"), "spec.priority: inf is not an integer"),
        # A long value is cut short: 37 characters of its repr, then "...".
        ("x" * 50, "spec.priority: '" + "x" * 36 + "... is not an integer"),
    ],
)
def test_bounded_int_names_the_field(value: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        bounded_int(value, 32, "spec.priority")
    assert str(caught.value) == message
