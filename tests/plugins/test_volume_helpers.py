"""plugins.helpers.volumes: storage quantities, the added-or-changed hint of raw objects, and
matching nodes against PV node affinity and StorageClass allowedTopologies."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.helpers.volumes import added_or_changed
from plugins.helpers.volumes import pv_node_affinity_matches
from plugins.helpers.volumes import storage_bytes
from plugins.helpers.volumes import topology_terms_match
from scheduler.framework import QueueingHint
from scheduler.objects.raw import RawObject
from scheduler.testing import make_pod

POD = make_pod("p").obj()


@pytest.mark.parametrize(
    ("value", "want"),
    [("1Gi", 1 << 30), ("500M", 500_000_000), (7, 7), (None, None), ("lots", None), ([], None)],
)
def test_storage_bytes_reads_quantities_and_gives_none_for_the_rest(
    value: Any, want: int | None
) -> None:
    assert storage_bytes(value) == want


def _zone(obj: RawObject) -> object:
    return obj.get("zone")


def test_added_or_changed_queues_an_add() -> None:
    assert added_or_changed(None, {"zone": "a"}, "Thing", _zone) is QueueingHint.QUEUE


def test_added_or_changed_queues_only_when_the_aspect_changed() -> None:
    before = {"zone": "a", "other": 1}
    assert added_or_changed(before, {"zone": "b", "other": 1}, "Thing", _zone) is (
        QueueingHint.QUEUE
    )
    assert added_or_changed(before, {"zone": "a", "other": 2}, "Thing", _zone) is (
        QueueingHint.QUEUE_SKIP
    )


def test_added_or_changed_refuses_what_is_not_an_api_object() -> None:
    with pytest.raises(TypeError) as caught:
        added_or_changed({"zone": "a"}, POD, "Thing", _zone)
    assert str(caught.value) == "expected the new object of a Thing event, got Pod"


ZONE = "topology.kubernetes.io/zone"
ZONE_A = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a"]}]}


def expression(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def affine_pv(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": list(terms)}}}}


GT_ABC = {"matchExpressions": [expression("example.com/gen", "Gt", "abc")]}
NOT_A_LABEL = {"matchExpressions": [expression(ZONE, "NotIn", "not a label")]}
BAD_KEY = {"matchExpressions": [expression(ZONE, "In", "a"), expression("bad key", "Exists")]}
NAMED = {"matchFields": [expression("metadata.name", "In", "another-node")]}
ZONE_B_NAMED = {**NAMED, "matchExpressions": [expression(ZONE, "In", "b")]}
FIELD_EXISTS = {"matchFields": [expression("metadata.name", "Exists")]}
TWO_NAMES = {"matchFields": [expression("metadata.name", "In", "n1", "n2")]}

# Upstream's CheckNodeAffinity on a node in zone a: a node made of labels alone, terms tried one
# by one, a term that labels.NewRequirement (or the field selector) refuses skipped.
AFFINITIES: dict[str, tuple[list[dict[str, Any]], bool]] = {
    "plain": ([ZONE_A], True),
    "no-terms": ([], False),
    "empty-term": ([{}], False),
    "unparsable-gt-skipped": ([GT_ABC, ZONE_A], True),
    "unparsable-after-a-match": ([ZONE_A, GT_ABC], True),
    "only-unparsable": ([GT_ABC], False),
    "invalid-label-value-skipped": ([NOT_A_LABEL], False),
    "one-bad-expression-spoils-its-term": ([BAD_KEY], False),
    "fields-compare-with-no-name": ([NAMED], True),
    "fields-leave-the-expressions-to-decide": ([ZONE_B_NAMED], False),
    "unparsable-fields-skipped": ([FIELD_EXISTS, ZONE_A], True),
    "fields-with-two-values": ([TWO_NAMES], False),
}


@pytest.mark.parametrize(("terms", "matches"), AFFINITIES.values(), ids=AFFINITIES.keys())
def test_pv_node_affinity_term_by_term(terms: list[dict[str, Any]], matches: bool) -> None:
    assert pv_node_affinity_matches(affine_pv(*terms), {ZONE: "a"}) is matches


def test_a_pv_without_required_affinity_suits_every_node() -> None:
    assert pv_node_affinity_matches({"spec": {}}, {})
    assert pv_node_affinity_matches({"spec": {"nodeAffinity": {}}}, {})


def topology(*values: str, key: str = ZONE) -> dict[str, Any]:
    return {"matchLabelExpressions": [{"key": key, "values": list(values)}]}


# Upstream's MatchTopologySelectorTerms: a term whose requirement NewRequirement refuses is
# skipped.
@pytest.mark.parametrize(
    ("terms", "matches"),
    [
        pytest.param([], True, id="no-terms"),
        pytest.param([topology("a", "b")], True, id="plain"),
        pytest.param([topology("b")], False, id="other-zone"),
        pytest.param([{}], False, id="empty-term"),
        pytest.param([topology("a", "zone b")], False, id="invalid-value"),
        pytest.param([topology("a", "zone b"), topology("a")], True, id="next-term-tried"),
        pytest.param([topology()], False, id="no-values"),
        pytest.param([topology("a", key="bad key")], False, id="invalid-key"),
    ],
)
def test_allowed_topologies(terms: list[dict[str, Any]], matches: bool) -> None:
    assert topology_terms_match(terms, {ZONE: "a", "bad key": "a"}) is matches
