"""Label selectors: compiled once, matched as the API server matches them, and refused in the
API server's words when they are invalid."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.objects.labels import EVERYTHING
from scheduler.objects.labels import Requirement
from scheduler.objects.labels import SelectorError
from scheduler.objects.labels import builds_requirement
from scheduler.objects.labels import make_requirement
from scheduler.objects.labels import merge_requirements
from scheduler.objects.labels import parse_label_selector
from scheduler.objects.labels import selector_from_set


def test_an_absent_selector_selects_nothing_and_an_empty_one_everything() -> None:
    assert parse_label_selector(None) is None
    empty = parse_label_selector({})
    assert empty is not None and empty.is_everything and empty.matches({"any": "thing"})


@pytest.mark.parametrize(
    ("expression", "labels", "matches"),
    [
        ({"key": "app", "operator": "In", "values": ["web", "api"]}, {"app": "api"}, True),
        ({"key": "app", "operator": "In", "values": ["web"]}, {}, False),
        ({"key": "app", "operator": "NotIn", "values": ["web"]}, {}, True),
        ({"key": "app", "operator": "NotIn", "values": ["web"]}, {"app": "web"}, False),
        ({"key": "app", "operator": "Exists"}, {"app": ""}, True),
        ({"key": "app", "operator": "DoesNotExist"}, {"app": ""}, False),
    ],
)
def test_set_operators(expression: dict[str, Any], labels: dict[str, str], matches: bool) -> None:
    selector = parse_label_selector({"matchExpressions": [expression]})
    assert selector is not None and selector.matches(labels) is matches


def test_match_labels_and_expressions_must_all_hold() -> None:
    selector = parse_label_selector(
        {"matchLabels": {"tier": "db"}, "matchExpressions": [{"key": "env", "operator": "Exists"}]}
    )
    assert selector is not None
    assert selector.matches({"tier": "db", "env": "prod"})
    assert not selector.matches({"tier": "db"})
    assert not selector.matches({"tier": "web", "env": "prod"})


def test_numeric_operators_compare_integers_and_fail_closed() -> None:
    gt = make_requirement({"key": "cores", "operator": "Gt", "values": ["4"]}, numeric=True)
    assert gt.matches({"cores": "8"}) and not gt.matches({"cores": "4"})
    assert not gt.matches({"cores": "many"}) and not gt.matches({})
    lt = make_requirement({"key": "cores", "operator": "Lt", "values": ["4"]}, numeric=True)
    assert lt.matches({"cores": "2"})


@pytest.mark.parametrize(
    ("raw", "numeric", "message"),
    [
        ({"operator": "Exists"}, False, "key: Required value"),
        ({"key": "a", "operator": "Gt", "values": ["1"]}, False, "operator: Unsupported value"),
        ({"key": "a", "operator": "In"}, False, "values: Required value"),
        ({"key": "a", "operator": "Exists", "values": ["x"]}, False, "values: Forbidden"),
        ({"key": "a", "operator": "Gt", "values": ["1", "2"]}, True, "must be one integer"),
        ({"key": "a", "operator": "Lt", "values": ["x"]}, True, "values[0]: Invalid value: 'x'"),
    ],
)
def test_invalid_requirements_are_refused(raw: dict[str, Any], numeric: bool, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        make_requirement(raw, numeric=numeric)
    assert message in str(caught.value)


def test_an_unknown_operator_built_by_hand_does_not_match_silently() -> None:
    with pytest.raises(SelectorError, match="unknown operator 'Near'"):
        Requirement("a", "Near", frozenset()).matches({"a": "1"})


def test_selector_from_set_matches_exactly_those_pairs() -> None:
    selector = selector_from_set({"zone": "a", "disk": "ssd"})
    assert selector.matches({"zone": "a", "disk": "ssd", "extra": "x"})
    assert not selector.matches({"zone": "a"})


def test_equal_selectors_share_a_cache_key() -> None:
    one = parse_label_selector(
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["2", "1"]}]}
    )
    two = parse_label_selector(
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}
    )
    assert one is not None and two is not None and one.cache_key() == two.cache_key()


def test_merging_adds_requirements() -> None:
    merged = merge_requirements(EVERYTHING, [Requirement("a", "Exists", frozenset())])
    assert not merged.matches({}) and merged.matches({"a": "x"})
    assert EVERYTHING.is_everything


# labels.NewRequirement's verdicts (apimachinery v0.36.3), for requirements the API server may
# have let through.
@pytest.mark.parametrize(
    ("key", "operator", "values", "built"),
    [
        ("zone", "In", ["a", ""], True),
        ("example.com/gen", "Gt", ["42"], True),
        ("gen", "Lt", ["9223372036854775807"], True),
        ("zone", "Exists", [], True),
        ("zone", "In", [], False),
        ("zone", "In", ["a", "zone b"], False),
        ("zone", "NotIn", ["-a"], False),
        ("zone", "In", ["x" * 64], False),
        ("gen", "Gt", ["abc"], False),
        ("gen", "Gt", ["1_0"], False),
        ("gen", "Gt", ["9223372036854775808"], False),
        # Go reads a signed integer, but the value must also be a label value.
        ("gen", "Gt", ["-3"], False),
        ("gen", "Gt", ["1", "2"], False),
        ("zone", "DoesNotExist", ["a"], False),
        ("bad key", "Exists", [], False),
        ("a/b/c", "Exists", [], False),
        ("", "Exists", [], False),
        ("zone", "Bogus", ["a"], False),
    ],
)
def test_builds_requirement_as_new_requirement_does(
    key: str, operator: str, values: list[str], built: bool
) -> None:
    assert builds_requirement(key, operator, values) is built
