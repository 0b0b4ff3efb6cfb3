"""plugins.helpers: score normalization, vectorized node selectors, taint checks, event objects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.helpers import DefaultNormalizer
from plugins.helpers import RequiredNodeAffinity
from plugins.helpers import after_own_update
from plugins.helpers import as_view
from plugins.helpers import count_intolerable_prefer_no_schedule
from plugins.helpers import default_normalize_score
from plugins.helpers import deleted_pod
from plugins.helpers import match_node_selector
from plugins.helpers import node_change
from plugins.helpers import pod_change
from plugins.helpers import prefer_no_schedule_tolerations
from plugins.helpers import preferred_score
from plugins.helpers import preferred_scores
from plugins.helpers import taint_events
from plugins.helpers import untolerated_rows
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import QueueingHint
from scheduler.objects.node import Node
from scheduler.objects.node_selector import parse_node_affinity
from scheduler.objects.node_selector import parse_node_selector
from scheduler.objects.pod import Pod
from scheduler.objects.taints import NO_EXECUTE
from scheduler.objects.taints import NO_SCHEDULE
from scheduler.objects.taints import Taint
from scheduler.objects.taints import Toleration
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod

# ---- default_normalize_score ---------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "reverse", "expected"),
    [
        ([10, 20, 30, 40, 50], False, [20, 40, 60, 80, 100]),
        ([10, 20, 30, 40, 50], True, [80, 60, 40, 20, 0]),
        ([1, 2, 3], False, [33, 66, 100]),  # integer division truncates
        ([1, 2, 3], True, [67, 34, 0]),
        ([0, 0, 0], False, [0, 0, 0]),
        ([0, 0, 0], True, [100, 100, 100]),  # nothing to prefer: every node is best
        ([-5, 0], False, [-5, 0]),  # no positive score: left as is
        ([-5, 10], False, [-50, 100]),  # negative quotients truncate toward zero
        ([-3, 10], False, [-30, 100]),
        ([-1, 3], False, [-33, 100]),
        ([], True, []),
    ],
    ids=[
        "scale",
        "scale-reversed",
        "truncates",
        "truncates-reversed",
        "all-zero",
        "all-zero-reversed",
        "none-positive",
        "negative",
        "negative-exact",
        "negative-truncates-toward-zero",
        "empty",
    ],
)
def test_default_normalize_score(scores: list[int], reverse: bool, expected: list[int]) -> None:
    array = np.asarray(scores, dtype=np.int64)
    default_normalize_score(100, reverse, array)
    assert array.tolist() == expected


def test_default_normalizer_rewrites_in_place() -> None:
    table = build_table([make_node("n1").obj(), make_node("n2").obj()])
    scores = np.asarray([5, 10], dtype=np.int64)
    status = DefaultNormalizer(reverse=True).normalize_score(
        CycleState(), make_pod("p").obj(), table, table.all_rows(), scores
    )
    assert status.is_success
    assert scores.tolist() == [50, 0]


# ---- node selectors over the table agree with the per-node objects ---------------------

KEYS = ("zone", "disk", "tier")
VALUES = ("a", "b", "1", "7", "12")
NAMES = tuple(f"n{i}" for i in range(5))


@st.composite
def nodes(draw: st.DrawFn) -> list[Node]:
    count = draw(st.integers(min_value=1, max_value=len(NAMES)))
    result = []
    for name in NAMES[:count]:
        builder = make_node(name)
        for key in KEYS:
            value = draw(st.none() | st.sampled_from(VALUES))
            if value is not None:
                builder.label(key, value)
        result.append(builder.obj())
    return result


@st.composite
def label_requirements(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    requirement: dict[str, Any] = {"key": draw(st.sampled_from(KEYS)), "operator": operator}
    if operator in ("In", "NotIn"):
        requirement["values"] = draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=2))
    elif operator in ("Gt", "Lt"):
        requirement["values"] = [str(draw(st.integers(min_value=0, max_value=15)))]
    return requirement


@st.composite
def field_requirements(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(["In", "NotIn"]))
    names = draw(st.lists(st.sampled_from([*NAMES, "missing"]), min_size=1, max_size=2))
    return {"key": "metadata.name", "operator": operator, "values": names}


@st.composite
def selector_terms(draw: st.DrawFn) -> dict[str, Any]:
    term: dict[str, Any] = {}
    expressions = draw(st.lists(label_requirements(), max_size=2))
    fields = draw(st.lists(field_requirements(), max_size=1))
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return term


@settings(max_examples=80, deadline=None)
@given(nodes=nodes(), terms=st.lists(selector_terms(), max_size=3))
def test_match_node_selector_agrees_with_per_node_matching(
    nodes: list[Node], terms: list[dict[str, Any]]
) -> None:
    selector = parse_node_selector({"nodeSelectorTerms": terms})
    assert selector is not None
    table = build_table(nodes)
    expected = [selector.matches(n.labels, n.name) for n in nodes]
    assert match_node_selector(table, selector).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(
    nodes=nodes(),
    weighted=st.lists(
        st.tuples(st.integers(min_value=0, max_value=100), selector_terms()), max_size=3
    ),
)
def test_preferred_scores_agree_with_preferred_score(
    nodes: list[Node], weighted: list[tuple[int, dict[str, Any]]]
) -> None:
    affinity = parse_node_affinity(
        {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": t} for w, t in weighted
            ]
        }
    )
    terms = affinity.preferred if affinity is not None else ()
    table = build_table(nodes)
    assert preferred_scores(table, terms).tolist() == [preferred_score(terms, n) for n in nodes]


def test_required_node_affinity_ands_node_selector_and_required_terms() -> None:
    pod = make_pod("p").node_selector(disk="ssd").node_affinity_in("zone", "a", "b").obj()
    required = RequiredNodeAffinity.of_pod(pod)
    candidates = [
        make_node("ok").labels(disk="ssd", zone="b").obj(),
        make_node("wrong-zone").labels(disk="ssd", zone="c").obj(),
        make_node("wrong-disk").labels(disk="hdd", zone="a").obj(),
    ]
    table = build_table(candidates)
    assert [required.matches(n) for n in candidates] == [True, False, False]
    assert required.match_rows(table).tolist() == [True, False, False]
    assert RequiredNodeAffinity.of_pod(make_pod("free").obj()).is_empty


# ---- taints --------------------------------------------------------------------------


def test_untolerated_rows_gathers_per_taint_set() -> None:
    table = build_table(
        [
            make_node("clean").obj(),
            make_node("gpu").taint("gpu", "true", NO_SCHEDULE).obj(),
            make_node("soft").taint("gpu", "true", "PreferNoSchedule").obj(),
            make_node("gpu2").taint("gpu", "true", NO_SCHEDULE).obj(),
        ]
    )
    effects = frozenset({NO_SCHEDULE, NO_EXECUTE})
    rows = np.asarray([3, 0, 1, 2], dtype=np.int64)
    assert untolerated_rows(table, rows, (), effects).tolist() == [True, False, True, False]
    tolerate = (Toleration("gpu", "Exists", "", ""),)
    assert not untolerated_rows(table, rows, tolerate, effects).any()


def test_prefer_no_schedule_counting() -> None:
    taints = [
        Taint("a", "", "PreferNoSchedule"),
        Taint("b", "", "PreferNoSchedule"),
        Taint("c", "", NO_SCHEDULE),
    ]
    tolerations = [
        Toleration("a", "Exists", "", ""),
        Toleration("b", "Exists", "", NO_SCHEDULE),
    ]
    kept = prefer_no_schedule_tolerations(tolerations)
    assert kept == (tolerations[0],)
    # "b" is tolerated only for NoSchedule, "c" is not PreferNoSchedule at all.
    assert count_intolerable_prefer_no_schedule(taints, kept) == 1


def _queue(pod: object, old: object, new: object) -> QueueingHint:
    return QueueingHint.QUEUE


def _skip(pod: object, old: object, new: object) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


def test_taint_events_are_node_taint_changes_and_pod_toleration_changes() -> None:
    node_event, pod_event = taint_events(_queue, _skip)
    assert node_event.event == ClusterEvent(
        EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT
    )
    assert node_event.hint is _queue
    assert pod_event.event == ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATIONS)
    assert pod_event.hint is _skip


# ---- event objects -------------------------------------------------------------------


def test_event_object_accessors_check_types() -> None:
    node = make_node("n").obj()
    pod = make_pod("p").obj()
    assert node_change(None, node) == (None, node)
    assert pod_change(pod, pod) == (pod, pod)
    assert deleted_pod(pod, None) is pod
    with pytest.raises(TypeError):
        node_change(None, pod)
    with pytest.raises(TypeError):
        pod_change(node, pod)
    with pytest.raises(TypeError):
        deleted_pod(None, pod)


def _type_error(call: Callable[[], object]) -> str:
    with pytest.raises(TypeError) as caught:
        call()
    return str(caught.value)


def test_event_object_accessors_name_the_side_they_expected() -> None:
    node = make_node("n").obj()
    pod = make_pod("p").obj()
    assert _type_error(lambda: node_change(node, pod)) == (
        "expected the new object of a Node event, got Pod"
    )
    assert _type_error(lambda: node_change(pod, node)) == (
        "expected the old object of a Node event, got Pod"
    )
    assert _type_error(lambda: pod_change(pod, None)) == (
        "expected the new object of a Pod event, got NoneType"
    )
    assert _type_error(lambda: pod_change(node, pod)) == (
        "expected the old object of a Pod event, got Node"
    )
    assert _type_error(lambda: deleted_pod(node, None)) == (
        "expected the deleted pod of a Pod event, got Node"
    )


def test_as_view_keeps_views_and_none_and_parses_raw_objects() -> None:
    node = make_node("n").obj()
    pod = make_pod("p").obj()
    assert as_view(node, Node) is node
    assert as_view(pod, Pod) is pod
    assert as_view(None, Pod) is None
    parsed = as_view({"metadata": {"name": "raw", "namespace": "ns", "uid": "u"}}, Pod)
    assert parsed is not None
    assert (parsed.name, parsed.namespace) == ("raw", "ns")
    raw_node = as_view({"metadata": {"name": "raw-node"}}, Node)
    assert raw_node is not None
    assert raw_node.name == "raw-node"
    assert _type_error(lambda: as_view(pod, Node)) == "expected a Node, got Pod"
    assert _type_error(lambda: as_view("p", Pod)) == "expected a Pod, got str"


def test_after_own_update_queues_only_the_updated_pod_itself() -> None:
    rejected = make_pod("p").uid("u1").obj()
    other = make_pod("q").uid("u2").obj()
    assert after_own_update(rejected, rejected, rejected) is QueueingHint.QUEUE
    assert after_own_update(rejected, other, other) is QueueingHint.QUEUE_SKIP
    with pytest.raises(TypeError):
        after_own_update(rejected, rejected, None)
