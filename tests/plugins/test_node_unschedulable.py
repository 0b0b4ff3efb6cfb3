"""NodeUnschedulable: cordoned nodes are rejected unless the pod tolerates the cordon."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.node_unschedulable import REASON
from plugins.node_unschedulable import SPEC
from plugins.node_unschedulable import NodeUnschedulable
from scheduler.framework import ActionType
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import ClusterEvent
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterPlugin
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework import Status
from scheduler.objects.node import Node
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node

PLUGIN = NodeUnschedulable(None, FakeHandle())
KEY = "node.kubernetes.io/unschedulable"
REJECTED = Status.unresolvable(REASON)


def test_spec() -> None:
    assert SPEC.name == NodeUnschedulable.name == "NodeUnschedulable"
    assert SPEC.extension_points == ["Filter"]
    assert isinstance(PLUGIN, FilterPlugin)
    assert isinstance(PLUGIN, BatchFilterPlugin)


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (make_pod("plain").obj(), [Status(), REJECTED]),
        (
            make_pod("tolerates").toleration(KEY, effect="NoSchedule", operator="Exists").obj(),
            [Status(), Status()],
        ),
        (make_pod("any-effect").toleration(KEY, operator="Exists").obj(), [Status(), Status()]),
        (make_pod("everything").toleration(operator="Exists").obj(), [Status(), Status()]),
        (
            make_pod("equal-empty-value").toleration(KEY, effect="NoSchedule").obj(),
            [Status(), Status()],
        ),
        (
            make_pod("wrong-effect").toleration(KEY, effect="NoExecute", operator="Exists").obj(),
            [Status(), REJECTED],
        ),
        (make_pod("wrong-value").toleration(KEY, "yes", "NoSchedule").obj(), [Status(), REJECTED]),
        (make_pod("other-key").toleration("other", operator="Exists").obj(), [Status(), REJECTED]),
    ],
    ids=lambda v: v.name if isinstance(v, Pod) else None,
)
def test_filter(pod: Pod, expected: list[Status]) -> None:
    table = build_table([make_node("ready").obj(), make_node("cordoned").unschedulable().obj()])
    assert filter_each_node(PLUGIN, CycleState(), pod, table) == expected
    assert filter_batch_as_statuses(PLUGIN, CycleState(), pod, table) == expected


def test_taints_alone_do_not_matter() -> None:
    # The cordon taint on a schedulable node is TaintToleration's business, not this plugin's.
    table = build_table([make_node("tainted").taint(KEY, effect="NoSchedule").obj()])
    pod = make_pod("p").obj()
    assert filter_each_node(PLUGIN, CycleState(), pod, table) == [Status()]


def hints() -> dict[ActionType, object]:
    registrations = PLUGIN.events_to_register()
    assert [r.event for r in registrations] == [
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATIONS),
    ]
    return {r.event.action: r.hint for r in registrations}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, make_node("n").obj(), QueueingHint.QUEUE),
        (None, make_node("n").unschedulable().obj(), QueueingHint.QUEUE_SKIP),
        (make_node("n").unschedulable().obj(), make_node("n").obj(), QueueingHint.QUEUE),
        (make_node("n").obj(), make_node("n").unschedulable().obj(), QueueingHint.QUEUE_SKIP),
        (make_node("n").obj(), make_node("n").taint("x").obj(), QueueingHint.QUEUE_SKIP),
    ],
    ids=["add-schedulable", "add-cordoned", "uncordoned", "cordoned", "stays-schedulable"],
)
def test_node_change_hint(old: Node | None, new: Node, expected: QueueingHint) -> None:
    hint = hints()[ActionType.ADD | ActionType.UPDATE_NODE_TAINT]
    assert callable(hint)
    assert hint(make_pod("p").obj(), old, new) is expected


def test_toleration_change_hint() -> None:
    hint = hints()[ActionType.UPDATE_POD_TOLERATIONS]
    assert callable(hint)
    pod = make_pod("p").uid("u1").obj()
    tolerating = make_pod("p").uid("u1").toleration(KEY, operator="Exists").obj()
    unrelated = make_pod("p").uid("u1").toleration("other", operator="Exists").obj()
    other_pod = make_pod("q").uid("u2").toleration(KEY, operator="Exists").obj()
    assert hint(pod, pod, tolerating) is QueueingHint.QUEUE
    assert hint(pod, pod, unrelated) is QueueingHint.QUEUE_SKIP
    assert hint(pod, other_pod, other_pod) is QueueingHint.QUEUE_SKIP


@settings(max_examples=60, deadline=None)
@given(
    cordoned=st.lists(st.booleans(), min_size=1, max_size=8),
    toleration=st.sampled_from(
        [None, (KEY, "Exists", "NoSchedule"), (KEY, "Exists", "NoExecute"), ("", "Exists", "")]
    ),
    data=st.data(),
)
def test_batch_and_per_node_forms_agree(
    cordoned: list[bool], toleration: tuple[str, str, str] | None, data: st.DataObject
) -> None:
    table = build_table(make_node(f"n{i}").unschedulable(c).obj() for i, c in enumerate(cordoned))
    builder = make_pod("p")
    if toleration is not None:
        key, operator, effect = toleration
        builder.toleration(key, effect=effect, operator=operator)
    pod = builder.obj()
    per_node = filter_each_node(PLUGIN, CycleState(), pod, table)
    assert filter_batch_as_statuses(PLUGIN, CycleState(), pod, table) == per_node
    rows = np.asarray(data.draw(st.permutations(range(table.size))), dtype=np.int64)
    subset = filter_batch_as_statuses(PLUGIN, CycleState(), pod, table, rows)
    assert subset == [per_node[int(r)] for r in rows]
