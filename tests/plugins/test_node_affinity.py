"""NodeAffinity: args, PreFilter, Filter, Score, QueueingHints, batch/per-node agreement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import ValidationError

from plugins.node_affinity import REASON_CONFLICT
from plugins.node_affinity import REASON_ENFORCED
from plugins.node_affinity import REASON_POD
from plugins.node_affinity import SPEC
from plugins.node_affinity import NodeAffinity
from plugins.node_affinity import NodeAffinityArgs
from scheduler.framework import ActionType
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import BatchScorePlugin
from scheduler.framework import ClusterEvent
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterPlugin
from scheduler.framework import Pod
from scheduler.framework import PreFilterPlugin
from scheduler.framework import PreFilterResult
from scheduler.framework import QueueingHint
from scheduler.framework import ScorePlugin
from scheduler.framework import Status
from scheduler.objects.node import Node
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    requirement: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        requirement["values"] = list(values)
    return requirement


def term(
    *expressions: dict[str, Any], fields: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if expressions:
        result["matchExpressions"] = list(expressions)
    if fields:
        result["matchFields"] = fields
    return result


def name_in(*names: str) -> dict[str, Any]:
    return expr("metadata.name", "In", *names)


def plugin_for(nodes: list[Node], added: dict[str, Any] | None = None) -> NodeAffinity:
    args = NodeAffinityArgs.model_validate({"addedAffinity": added}) if added else None
    return NodeAffinity(args, FakeHandle(build_table(nodes)))


# ---- args ----------------------------------------------------------------------------


def test_spec_and_protocols() -> None:
    assert SPEC.name == NodeAffinity.name == "NodeAffinity"
    assert SPEC.args_model is NodeAffinityArgs
    plugin = plugin_for([])
    for protocol in (
        PreFilterPlugin,
        FilterPlugin,
        BatchFilterPlugin,
        ScorePlugin,
        BatchScorePlugin,
    ):
        assert isinstance(plugin, protocol)
    assert plugin.pre_filter_extensions() is None


def test_args_accept_camel_case_and_default_to_none() -> None:
    added = {REQUIRED: {"nodeSelectorTerms": [term(expr("pool", "In", "batch"))]}}
    args = NodeAffinityArgs.model_validate({"addedAffinity": added})
    # Written back as given, without the defaults of the fields left out.
    assert args.model_dump(mode="json", by_alias=True)["addedAffinity"] == added
    assert NodeAffinityArgs().added_affinity is None


TERM = (REQUIRED, "nodeSelectorTerms", 0, "matchExpressions", 0)
LABEL_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.mark.parametrize(
    ("added", "loc", "message"),
    [
        (
            {REQUIRED: {"nodeSelectorTerms": [term(expr("pool", "Bogus", "x"))]}},
            (*TERM, "operator"),
            'Unsupported value: "Bogus": supported values: "In", "NotIn", "Exists", '
            '"DoesNotExist", "Gt", "Lt"',
        ),
        (
            {REQUIRED: {"nodeSelectorTerms": [term(expr("pool", "In"))]}},
            (*TERM, "values"),
            "Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {REQUIRED: {"nodeSelectorTerms": [term(expr("size", "Gt", "big"))]}},
            (*TERM, "values", 0),
            "Invalid value: \"big\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            {REQUIRED: {"nodeSelectorTerms": [term(expr("zone", "In", "a b"))]}},
            (*TERM, "values", 0, "[zone]"),
            f'Invalid value: "a b": {LABEL_RULE}',
        ),
        (
            {REQUIRED: {"nodeSelectorTerms": [term(fields=[name_in("a", "b")])]}},
            (REQUIRED, "nodeSelectorTerms", 0, "matchFields", 0, "values"),
            'Invalid value: ["a","b"]: must have one element',
        ),
        (
            {PREFERRED: [{"weight": 1, "preference": term(expr("pool", "Exists", "x"))}]},
            # Upstream's path has no `preference` in it.
            (PREFERRED, 0, "matchExpressions", 0, "values"),
            'Invalid value: ["x"]: values set must be empty for exists and does not exist',
        ),
        (
            {PREFERRED: [{"weight": "heavy", "preference": term(expr("pool", "Exists"))}]},
            (PREFERRED, 0, "weight"),
            "Input should be a valid integer",
        ),
        (
            {REQUIRED: {"nodeSelectorTerms": [term(expr("zone", "In", "a") | {"extra": 1})]}},
            (*TERM, "extra"),
            "Extra inputs are not permitted",
        ),
        (
            {REQUIRED: {"nodeSelectorTerms": [term(expr("zone", "In") | {"values": "abc"})]}},
            (*TERM, "values"),
            "Input should be a valid tuple",
        ),
        (
            {"requiredDuringSchedulingRequiredDuringExecution": {}},
            ("requiredDuringSchedulingRequiredDuringExecution",),
            "Extra inputs are not permitted",
        ),
    ],
    ids=[
        "unknown-operator",
        "in-without-values",
        "gt-not-integer",
        "invalid-label-value",
        "name-field-with-two-values",
        "exists-with-values",
        "weight-not-integer",
        "unknown-nested-field",
        "values-not-a-list",
        "unknown-field",
    ],
)
def test_args_reject_invalid_selectors_naming_the_field(
    added: dict[str, Any], loc: tuple[str | int, ...], message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        NodeAffinityArgs.model_validate({"addedAffinity": added})
    assert [(e["loc"], e["msg"]) for e in caught.value.errors()] == [
        (("addedAffinity", *loc), message)
    ]


def test_args_report_every_problem_and_skip_what_upstream_skips() -> None:
    added = {
        REQUIRED: {"nodeSelectorTerms": [term(expr("pool", "In"), expr("bad key", "Exists")), {}]},
        # Weight 0: never scored, so never checked.
        PREFERRED: [{"weight": 0, "preference": term(expr("pool", "In"))}],
    }
    with pytest.raises(ValidationError) as caught:
        NodeAffinityArgs.model_validate({"addedAffinity": added})
    assert [e["loc"][-1] for e in caught.value.errors()] == ["values", "key"]


def test_a_match_field_other_than_the_name_matches_as_upstreams() -> None:
    # Only metadata.name is set on a node: In on another field matches none, NotIn every one.
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    pod = make_pod("p").obj()
    for operator, expected in (("In", []), ("NotIn", ["n1", "n2"])):
        added = {REQUIRED: {"nodeSelectorTerms": [term(fields=[expr("spec.uid", operator, "x")])]}}
        plugin = plugin_for(nodes, added)
        state = CycleState()
        plugin.pre_filter(state, pod, build_table(nodes))
        statuses = filter_each_node(plugin, state, pod, build_table(nodes))
        assert [n.name for n, s in zip(nodes, statuses, strict=True) if s.is_success] == expected


def test_args_reject_unknown_top_level_fields() -> None:
    with pytest.raises(ValidationError):
        NodeAffinityArgs.model_validate({"addedAfinity": {}})


# ---- PreFilter -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "added", "expected_result", "expected_code"),
    [
        (make_pod("plain").obj(), None, None, Code.SKIP),
        (
            make_pod("preferred-only").preferred_node_affinity(5, term(expr("a", "Exists"))).obj(),
            None,
            None,
            Code.SKIP,
        ),
        (
            make_pod("plain").obj(),
            {PREFERRED: [{"weight": 3, "preference": term(expr("a", "Exists"))}]},
            None,
            Code.SKIP,
        ),
        (
            make_pod("plain").obj(),
            {REQUIRED: {"nodeSelectorTerms": [term(expr("a", "Exists"))]}},
            None,
            Code.SUCCESS,
        ),
        (make_pod("selector").node_selector(disk="ssd").obj(), None, None, Code.SUCCESS),
        (make_pod("labels").node_affinity_in("zone", "a").obj(), None, None, Code.SUCCESS),
        (
            make_pod("one-name").node_affinity_term(term(fields=[name_in("n1")])).obj(),
            None,
            frozenset({"n1"}),
            Code.SUCCESS,
        ),
        (
            make_pod("union")
            .node_affinity_term(term(fields=[name_in("n1", "n2")]))
            .node_affinity_term(term(fields=[name_in("n3")]))
            .obj(),
            None,
            frozenset({"n1", "n2", "n3"}),
            Code.SUCCESS,
        ),
        (
            make_pod("intersection")
            .node_affinity_term(term(fields=[name_in("n1", "n2"), name_in("n2", "n3")]))
            .obj(),
            None,
            frozenset({"n2"}),
            Code.SUCCESS,
        ),
        (
            make_pod("term-without-names")
            .node_affinity_term(term(fields=[name_in("n1")]))
            .node_affinity_in("zone", "a")
            .obj(),
            None,
            None,
            Code.SUCCESS,
        ),
        (
            make_pod("not-in-does-not-narrow")
            .node_affinity_term(term(fields=[expr("metadata.name", "NotIn", "n1")]))
            .obj(),
            None,
            None,
            Code.SUCCESS,
        ),
        (
            make_pod("conflict")
            .node_affinity_term(term(fields=[name_in("n1"), name_in("n2")]))
            .obj(),
            None,
            None,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ),
        (
            make_pod("narrowed-with-added").node_affinity_term(term(fields=[name_in("n1")])).obj(),
            {REQUIRED: {"nodeSelectorTerms": [term(expr("a", "Exists"))]}},
            frozenset({"n1"}),
            Code.SUCCESS,
        ),
    ],
    ids=lambda v: v.name if isinstance(v, Pod) else None,
)
def test_pre_filter(
    pod: Pod,
    added: dict[str, Any] | None,
    expected_result: frozenset[str] | None,
    expected_code: Code,
) -> None:
    plugin = plugin_for([make_node("n1").obj()], added)
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, build_table([]))
    assert status.code is expected_code
    if expected_code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert status.message() == REASON_CONFLICT
    expected = None if expected_result is None else PreFilterResult(expected_result)
    assert result == expected


# ---- Filter --------------------------------------------------------------------------

NODES = [
    make_node("n1").labels(zone="a", disk="ssd", cores="8").obj(),
    make_node("n2").labels(zone="b", disk="ssd", cores="32").obj(),
    make_node("n3").labels(zone="b").obj(),
]
POD = Status.unresolvable(REASON_POD)
ENFORCED = Status.unresolvable(REASON_ENFORCED)
OK = Status()


@pytest.mark.parametrize(
    ("pod", "added", "expected"),
    [
        (make_pod("free").obj(), None, [OK, OK, OK]),
        (make_pod("selector").node_selector(disk="ssd").obj(), None, [OK, OK, POD]),
        (
            make_pod("selector-and-affinity")
            .node_selector(disk="ssd")
            .node_affinity_in("zone", "b")
            .obj(),
            None,
            [POD, OK, POD],
        ),
        (
            make_pod("terms-ored")
            .node_affinity_in("zone", "a")
            .node_affinity_in("disk", "hdd")
            .obj(),
            None,
            [OK, POD, POD],
        ),
        (
            make_pod("expressions-anded")
            .node_affinity_term(term(expr("zone", "In", "b"), expr("disk", "Exists")))
            .obj(),
            None,
            [POD, OK, POD],
        ),
        (
            make_pod("gt").node_affinity_term(term(expr("cores", "Gt", "10"))).obj(),
            None,
            [POD, OK, POD],
        ),
        (
            make_pod("not-in-absent-label")
            .node_affinity_term(term(expr("disk", "NotIn", "ssd")))
            .obj(),
            None,
            [POD, POD, OK],
        ),
        (
            make_pod("name-field")
            .node_affinity_term(term(expr("zone", "In", "b"), fields=[name_in("n3")]))
            .obj(),
            None,
            [POD, POD, OK],
        ),
        (
            make_pod("empty-term-matches-nothing").node_affinity_term({}).obj(),
            None,
            [POD, POD, POD],
        ),
        (
            make_pod("added-only").obj(),
            {REQUIRED: {"nodeSelectorTerms": [term(expr("zone", "In", "b"))]}},
            [ENFORCED, OK, OK],
        ),
        (
            make_pod("added-checked-first").node_selector(disk="ssd").obj(),
            {REQUIRED: {"nodeSelectorTerms": [term(expr("zone", "In", "b"))]}},
            [ENFORCED, OK, POD],
        ),
    ],
    ids=lambda v: v.name if isinstance(v, Pod) else None,
)
def test_filter(pod: Pod, added: dict[str, Any] | None, expected: list[Status]) -> None:
    plugin = plugin_for(NODES, added)
    table = build_table(NODES)
    state = CycleState()
    plugin.pre_filter(state, pod, table)
    assert filter_each_node(plugin, state, pod, table) == expected
    assert filter_batch_as_statuses(plugin, state, pod, table) == expected
    # Without PreFilter state both forms compute the same constraints themselves.
    assert filter_each_node(plugin, CycleState(), pod, table) == expected
    assert filter_batch_as_statuses(plugin, CycleState(), pod, table) == expected


# ---- Score ---------------------------------------------------------------------------


def test_score_sums_matching_weights_including_added_terms() -> None:
    added = {PREFERRED: [{"weight": 7, "preference": term(expr("zone", "In", "b"))}]}
    pod = (
        make_pod("p")
        .preferred_node_affinity(2, term(expr("disk", "In", "ssd")))
        .preferred_node_affinity(5, term(expr("cores", "Lt", "16")))
        .preferred_node_affinity(0, term(expr("zone", "Exists")))
        .obj()
    )
    plugin = plugin_for(NODES, added)
    table = build_table(NODES)
    state = CycleState()
    assert plugin.pre_score(state, pod, table, table.all_rows()).is_success
    # n1: ssd(2) + 8<16(5); n2: ssd(2) + zone b(7); n3: zone b(7)
    assert score_each_node(plugin, state, pod, table) == [7, 9, 7]
    assert score_batch(plugin, state, pod, table) == [7, 9, 7]
    scores = np.asarray([7, 9, 7], dtype=np.int64)
    extensions = plugin.score_extensions()
    extensions.normalize_score(state, pod, table, table.all_rows(), scores)
    assert scores.tolist() == [77, 100, 77]


def test_pre_score_skips_without_preferred_terms() -> None:
    table = build_table(NODES)
    pod = make_pod("p").node_affinity_in("zone", "a").obj()
    assert plugin_for(NODES).pre_score(CycleState(), pod, table, table.all_rows()).is_skip
    added = {PREFERRED: [{"weight": 1, "preference": term(expr("zone", "Exists"))}]}
    status = plugin_for(NODES, added).pre_score(CycleState(), pod, table, table.all_rows())
    assert status.is_success


# ---- QueueingHints -------------------------------------------------------------------


def node_change_hint(plugin: NodeAffinity) -> Any:
    (registration,) = plugin.events_to_register()
    assert registration.event == ClusterEvent(
        EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
    )
    assert registration.hint is not None
    return registration.hint


@pytest.mark.parametrize(
    ("old", "new", "added", "expected"),
    [
        (None, make_node("n").label("zone", "a").obj(), None, QueueingHint.QUEUE),
        (None, make_node("n").label("zone", "b").obj(), None, QueueingHint.QUEUE_SKIP),
        (
            make_node("n").label("zone", "b").obj(),
            make_node("n").label("zone", "a").obj(),
            None,
            QueueingHint.QUEUE,
        ),
        (
            make_node("n").label("zone", "a").obj(),
            make_node("n").labels(zone="a", extra="x").obj(),
            None,
            QueueingHint.QUEUE_SKIP,
        ),
        (
            None,
            make_node("n").label("zone", "a").obj(),
            {REQUIRED: {"nodeSelectorTerms": [term(expr("pool", "Exists"))]}},
            QueueingHint.QUEUE_SKIP,
        ),
        (
            None,
            make_node("n").labels(zone="a", pool="x").obj(),
            {REQUIRED: {"nodeSelectorTerms": [term(expr("pool", "Exists"))]}},
            QueueingHint.QUEUE,
        ),
    ],
    ids=[
        "added-matching",
        "added-not-matching",
        "update-now-matches",
        "update-already-matched",
        "added-affinity-not-matched",
        "added-affinity-matched",
    ],
)
def test_node_change_hint(
    old: Node | None, new: Node, added: dict[str, Any] | None, expected: QueueingHint
) -> None:
    pod = make_pod("p").node_affinity_in("zone", "a").obj()
    assert node_change_hint(plugin_for([], added))(pod, old, new) is expected


# ---- batch and per-node forms agree ----------------------------------------------------

KEYS = ("zone", "disk", "cores")
VALUES = ("a", "b", "3", "10")
NAMES = tuple(f"n{i}" for i in range(6))


@st.composite
def requirement(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    key = draw(st.sampled_from(KEYS))
    if operator in ("In", "NotIn"):
        return expr(key, operator, *draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=2)))
    if operator in ("Gt", "Lt"):
        return expr(key, operator, str(draw(st.integers(min_value=0, max_value=12))))
    return expr(key, operator)


@st.composite
def terms(draw: st.DrawFn) -> dict[str, Any]:
    expressions = draw(st.lists(requirement(), max_size=2))
    fields = []
    if draw(st.booleans()):
        operator = draw(st.sampled_from(["In", "NotIn"]))
        # One name: the API (and the args) take no other number of values for a field.
        names = draw(st.lists(st.sampled_from([*NAMES, "gone"]), min_size=1, max_size=1))
        fields.append(expr("metadata.name", operator, *names))
    return term(*expressions, fields=fields)


@st.composite
def node_lists(draw: st.DrawFn) -> list[Node]:
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
def pods(draw: st.DrawFn) -> Pod:
    builder = make_pod("p")
    for key, value in draw(
        st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2)
    ).items():
        builder.node_selector(**{key: value})
    for required in draw(st.lists(terms(), max_size=2)):
        builder.node_affinity_term(required)
    for weight, preferred in draw(st.lists(st.tuples(st.integers(0, 100), terms()), max_size=3)):
        builder.preferred_node_affinity(weight, preferred)
    return builder.obj()


@st.composite
def added_affinities(draw: st.DrawFn) -> dict[str, Any] | None:
    added: dict[str, Any] = {}
    required = draw(st.lists(terms(), max_size=2))
    if required:
        added[REQUIRED] = {"nodeSelectorTerms": required}
    preferred = draw(st.lists(st.tuples(st.integers(1, 100), terms()), max_size=2))
    if preferred:
        added[PREFERRED] = [{"weight": w, "preference": t} for w, t in preferred]
    return added or None


@settings(max_examples=80, deadline=None)
@given(nodes=node_lists(), pod=pods(), added=added_affinities(), data=st.data())
def test_batch_and_per_node_forms_agree(
    nodes: list[Node], pod: Pod, added: dict[str, Any] | None, data: st.DataObject
) -> None:
    table = build_table(nodes)
    args = NodeAffinityArgs.model_validate({"addedAffinity": added})
    plugin = NodeAffinity(args, FakeHandle(table))
    state = CycleState()
    result, _ = plugin.pre_filter(state, pod, table)
    per_node = filter_each_node(plugin, state, pod, table)
    assert filter_batch_as_statuses(plugin, state, pod, table) == per_node
    rows = np.asarray(
        data.draw(st.lists(st.sampled_from(range(table.size)), unique=True)), dtype=np.int64
    )
    subset = filter_batch_as_statuses(plugin, state, pod, table, rows)
    assert subset == [per_node[int(r)] for r in rows]
    if result is not None and result.node_names is not None:
        # Narrowing may only drop nodes that Filter would reject anyway.
        for name, status in zip(table.names, per_node, strict=True):
            if name not in result.node_names:
                assert not status.is_success

    plugin.pre_score(state, pod, table, table.all_rows())
    scores = score_each_node(plugin, state, pod, table)
    assert score_batch(plugin, state, pod, table) == scores
    assert score_batch(plugin, state, pod, table, rows) == [scores[int(r)] for r in rows]
