"""Node selectors and node affinity: terms ORed, requirements ANDed, fields only by name."""

from __future__ import annotations

import pytest

from scheduler.objects.labels import SelectorError
from scheduler.objects.node_selector import parse_node_affinity
from scheduler.objects.node_selector import parse_node_selector
from scheduler.objects.node_selector import parse_term

SSD = {"key": "disk", "operator": "In", "values": ["ssd"]}
ZONE_A = {"key": "zone", "operator": "In", "values": ["a"]}


def test_terms_are_ored_and_expressions_anded() -> None:
    selector = parse_node_selector(
        {"nodeSelectorTerms": [{"matchExpressions": [SSD, ZONE_A]}, {"matchExpressions": [ZONE_A]}]}
    )
    assert selector is not None
    assert selector.matches({"zone": "a"}, "n")
    assert selector.matches({"disk": "ssd", "zone": "a"}, "n")
    assert not selector.matches({"disk": "ssd"}, "n")


def test_an_empty_term_matches_no_node() -> None:
    selector = parse_node_selector({"nodeSelectorTerms": [{}]})
    assert selector is not None and not selector.matches({"any": "label"}, "n")
    assert parse_node_selector(None) is None


def test_match_fields_select_by_node_name() -> None:
    term = parse_term(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    )
    assert term.uses_fields
    assert term.matches({}, "n1") and not term.matches({}, "n2")


def test_a_field_other_than_the_name_is_refused() -> None:
    with pytest.raises(SelectorError, match=r"matchFields\.key: Invalid value: 'spec\.x'"):
        parse_term({"matchFields": [{"key": "spec.x", "operator": "In", "values": ["1"]}]})


def test_node_selectors_allow_numeric_comparison() -> None:
    term = parse_term({"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["3"]}]})
    assert term.matches({"gen": "4"}, "n") and not term.matches({"gen": "3"}, "n")


def test_node_affinity_reads_required_and_weighted_preferred_terms() -> None:
    affinity = parse_node_affinity(
        {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [ZONE_A]}]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchExpressions": [SSD]}}
            ],
        }
    )
    assert affinity is not None and affinity.required is not None
    assert affinity.required.matches({"zone": "a"}, "n")
    assert [p.weight for p in affinity.preferred] == [5]
    assert affinity.preferred[0].term.matches({"disk": "ssd"}, "n")
    assert parse_node_affinity({}) is None


def test_a_preferred_weight_past_int32_is_refused() -> None:
    raw = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 2**31, "preference": {}}]}
    with pytest.raises(ValueError, match="weight: 2147483648 does not fit in an int32"):
        parse_node_affinity(raw)
