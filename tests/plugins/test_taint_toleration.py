"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.taint_toleration import REASON
from plugins.taint_toleration import SPEC
from plugins.taint_toleration import TaintToleration
from scheduler.framework import ActionType
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import BatchScorePlugin
from scheduler.framework import ClusterEvent
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterPlugin
from scheduler.framework import Pod
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

PLUGIN = TaintToleration(None, FakeHandle())
REJECTED = Status.unresolvable(REASON)
OK = Status()


def test_spec() -> None:
    assert SPEC.name == TaintToleration.name == "TaintToleration"
    assert SPEC.extension_points == ["Filter", "PreScore", "Score"]
    for protocol in (FilterPlugin, BatchFilterPlugin, ScorePlugin, BatchScorePlugin):
        assert isinstance(PLUGIN, protocol)


def test_reason_does_not_reveal_the_taint() -> None:
    assert REASON == "node(s) had untolerated taint(s)"


NODES = [
    make_node("clean").obj(),
    make_node("dedicated").taint("dedicated", "infra", "NoSchedule").obj(),
    make_node("evicting").taint("maintenance", "", "NoExecute").obj(),
    make_node("soft").taint("spot", "true", "PreferNoSchedule").obj(),
]


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (make_pod("none").obj(), [OK, REJECTED, REJECTED, OK]),
        (
            make_pod("equal").toleration("dedicated", "infra", "NoSchedule").obj(),
            [OK, OK, REJECTED, OK],
        ),
        (
            make_pod("equal-wrong-value").toleration("dedicated", "db", "NoSchedule").obj(),
            [OK, REJECTED, REJECTED, OK],
        ),
        (
            make_pod("exists-any-effect").toleration("dedicated", operator="Exists").obj(),
            [OK, OK, REJECTED, OK],
        ),
        (
            make_pod("wrong-effect").toleration("dedicated", "infra", "PreferNoSchedule").obj(),
            [OK, REJECTED, REJECTED, OK],
        ),
        (
            make_pod("no-execute")
            .toleration("maintenance", effect="NoExecute", operator="Exists")
            .obj(),
            [OK, REJECTED, OK, OK],
        ),
        (make_pod("tolerate-everything").toleration(operator="Exists").obj(), [OK, OK, OK, OK]),
    ],
    ids=lambda v: v.name if isinstance(v, Pod) else None,
)
def test_filter(pod: Pod, expected: list[Status]) -> None:
    table = build_table(NODES)
    assert filter_each_node(PLUGIN, CycleState(), pod, table) == expected
    assert filter_batch_as_statuses(PLUGIN, CycleState(), pod, table) == expected


SCORED_NODES = [
    make_node("clean").obj(),
    make_node("one").taint("a", "", "PreferNoSchedule").obj(),
    make_node("two").taint("a", "", "PreferNoSchedule").taint("b", "", "PreferNoSchedule").obj(),
    make_node("hard").taint("b", "", "NoSchedule").obj(),
]


@pytest.mark.parametrize(
    ("pod", "raw", "normalized"),
    [
        (make_pod("none").obj(), [0, 1, 2, 0], [100, 50, 0, 100]),
        (
            make_pod("tolerates-b")
            .toleration("b", effect="PreferNoSchedule", operator="Exists")
            .obj(),
            [0, 1, 1, 0],
            [100, 0, 0, 100],
        ),
        (
            make_pod("any-effect").toleration("a", operator="Exists").obj(),
            [0, 0, 1, 0],
            [100, 100, 0, 100],
        ),
        (
            make_pod("only-no-schedule")
            .toleration("a", effect="NoSchedule", operator="Exists")
            .obj(),
            [0, 1, 2, 0],
            [100, 50, 0, 100],
        ),
        (make_pod("all").toleration(operator="Exists").obj(), [0, 0, 0, 0], [100, 100, 100, 100]),
    ],
    ids=lambda v: v.name if isinstance(v, Pod) else None,
)
def test_score(pod: Pod, raw: list[int], normalized: list[int]) -> None:
    table = build_table(SCORED_NODES)
    state = CycleState()
    assert PLUGIN.pre_score(state, pod, table, table.all_rows()).is_success
    assert score_each_node(PLUGIN, state, pod, table) == raw
    assert score_batch(PLUGIN, state, pod, table) == raw
    scores = np.asarray(raw, dtype=np.int64)
    PLUGIN.score_extensions().normalize_score(state, pod, table, table.all_rows(), scores)
    assert scores.tolist() == normalized


def registrations() -> dict[EventResource, Any]:
    found = PLUGIN.events_to_register()
    assert [r.event for r in found] == [
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATIONS),
    ]
    return {r.event.resource: r.hint for r in found}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, make_node("n").obj(), QueueingHint.QUEUE),
        (None, make_node("n").taint("x").obj(), QueueingHint.QUEUE_SKIP),
        (None, make_node("n").taint("gpu").obj(), QueueingHint.QUEUE),
        (make_node("n").taint("x").obj(), make_node("n").obj(), QueueingHint.QUEUE),
        (make_node("n").obj(), make_node("n").label("a", "b").obj(), QueueingHint.QUEUE_SKIP),
        (make_node("n").obj(), make_node("n").taint("x").obj(), QueueingHint.QUEUE_SKIP),
        (
            make_node("n").taint("x").obj(),
            make_node("n").taint("x", effect="PreferNoSchedule").obj(),
            QueueingHint.QUEUE,
        ),
    ],
    ids=[
        "add-clean",
        "add-untolerated",
        "add-tolerated",
        "taint-removed",
        "was-fine",
        "taint-added",
        "taint-softened",
    ],
)
def test_node_change_hint(old: Node | None, new: Node, expected: QueueingHint) -> None:
    pod = make_pod("p").toleration("gpu", operator="Exists").obj()
    assert registrations()[EventResource.NODE](pod, old, new) is expected


def test_toleration_change_hint_queues_only_the_pod_itself() -> None:
    hint = registrations()[EventResource.POD]
    pod = make_pod("p").uid("u1").obj()
    updated = make_pod("p").uid("u1").toleration("x", operator="Exists").obj()
    other = make_pod("q").uid("u2").toleration("x", operator="Exists").obj()
    assert hint(pod, pod, updated) is QueueingHint.QUEUE
    assert hint(pod, other, other) is QueueingHint.QUEUE_SKIP


# ---- batch and per-node forms agree ----------------------------------------------------

TAINT_KEYS = ("a", "b", "c")
TAINT_VALUES = ("", "x", "3", "12")
EFFECTS = ("NoSchedule", "NoExecute", "PreferNoSchedule")


@st.composite
def tainted_nodes(draw: st.DrawFn) -> list[Node]:
    count = draw(st.integers(min_value=1, max_value=8))
    nodes = []
    for i in range(count):
        builder = make_node(f"n{i}")
        taints = draw(
            st.lists(
                st.tuples(
                    st.sampled_from(TAINT_KEYS),
                    st.sampled_from(TAINT_VALUES),
                    st.sampled_from(EFFECTS),
                ),
                max_size=3,
                unique_by=lambda t: (t[0], t[2]),
            )
        )
        for key, value, effect in taints:
            builder.taint(key, value, effect)
        nodes.append(builder.obj())
    return nodes


@st.composite
def tolerating_pods(draw: st.DrawFn) -> Pod:
    builder = make_pod("p")
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        operator = draw(st.sampled_from(["Equal", "Exists", "Lt", "Gt"]))
        key = (
            draw(st.sampled_from([*TAINT_KEYS, ""]))
            if operator == "Exists"
            else draw(st.sampled_from(TAINT_KEYS))
        )
        value = "" if operator == "Exists" else draw(st.sampled_from(TAINT_VALUES))
        effect = draw(st.sampled_from(["", *EFFECTS]))
        builder.toleration(key, value, effect, operator)
    return builder.obj()


@settings(max_examples=80, deadline=None)
@given(nodes=tainted_nodes(), pod=tolerating_pods(), data=st.data())
def test_batch_and_per_node_forms_agree(nodes: list[Node], pod: Pod, data: st.DataObject) -> None:
    table = build_table(nodes)
    gates = {GATE: data.draw(st.booleans())}
    plugin = TaintToleration(None, FakeHandle(table, gates=gates))
    state = CycleState()
    per_node = filter_each_node(plugin, state, pod, table)
    assert filter_batch_as_statuses(plugin, state, pod, table) == per_node
    rows = np.asarray(
        data.draw(st.lists(st.sampled_from(range(table.size)), unique=True)), dtype=np.int64
    )
    assert filter_batch_as_statuses(plugin, state, pod, table, rows) == [
        per_node[int(r)] for r in rows
    ]

    plugin.pre_score(state, pod, table, table.all_rows())
    scores = score_each_node(plugin, state, pod, table)
    assert score_batch(plugin, state, pod, table) == scores
    assert score_batch(plugin, state, pod, table, rows) == [scores[int(r)] for r in rows]


# ---- Lt and Gt, with TaintTolerationComparisonOperators ------------------------------------

GATE = "TaintTolerationComparisonOperators"
LEVELS = [
    make_node("sla-30").taint("sla", "30", "NoSchedule").obj(),
    make_node("sla-50").taint("sla", "50", "NoSchedule").obj(),
    make_node("soft-50").taint("sla", "50", "PreferNoSchedule").obj(),
]
ABOVE_40 = make_pod("above-40").toleration("sla", "40", operator="Gt").obj()


@pytest.mark.parametrize(
    ("gate", "expected"), [(True, [REJECTED, OK, OK]), (False, [REJECTED, REJECTED, OK])]
)
def test_a_gt_toleration_tolerates_greater_values_only_with_the_gate(
    gate: bool, expected: list[Status]
) -> None:
    table = build_table(LEVELS)
    plugin = TaintToleration(None, FakeHandle(table, gates={GATE: gate}))
    assert filter_each_node(plugin, CycleState(), ABOVE_40, table) == expected
    assert filter_batch_as_statuses(plugin, CycleState(), ABOVE_40, table) == expected
    state = CycleState()
    plugin.pre_score(state, ABOVE_40, table, table.all_rows())
    # The PreferNoSchedule taint counts against the node unless the toleration covers it.
    assert score_batch(plugin, state, ABOVE_40, table)[2] == (0 if gate else 1)


@pytest.mark.parametrize("gate", [True, False])
def test_a_taint_value_rising_past_the_bound_requeues_only_with_the_gate(gate: bool) -> None:
    plugin = TaintToleration(None, FakeHandle(gates={GATE: gate}))
    hints = {r.event.resource: r.hint for r in plugin.events_to_register()}
    node_hint = hints[EventResource.NODE]
    assert node_hint is not None
    expected = QueueingHint.QUEUE if gate else QueueingHint.QUEUE_SKIP
    assert node_hint(ABOVE_40, LEVELS[0], LEVELS[1]) is expected
