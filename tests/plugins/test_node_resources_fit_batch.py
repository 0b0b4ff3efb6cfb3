"""Batch forms of NodeResourcesFit and BalancedAllocation on tables larger than the generated
ones: how rejected rows are grouped into reasons, which rows count as "every row in order",
and quantities too large for float64 to hold exactly. Every case compares the batch form with
the per-node form, which is the specification."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plugins.balanced_allocation import NodeResourcesBalancedAllocation
from plugins.balanced_allocation import NodeResourcesBalancedAllocationArgs
from plugins.helpers.resources.row_columns import covers_every_row
from plugins.node_resources_fit import NodeResourcesFit
from plugins.node_resources_fit import NodeResourcesFitArgs
from scheduler.framework import CycleState
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node


def extended(i: int) -> str:
    return f"example.com/r{i:02d}"


def bound(name: str, node_name: str, **requests: str | int) -> Pod:
    return make_pod(name).node(node_name).req(**requests).obj()


def _rows(table: NodeTable) -> list[np.ndarray]:
    """Every row, and every third row."""
    return [table.all_rows(), table.all_rows()[::3].copy()]


def assert_filter_forms_agree(nodes: list[Node], existing: list[Pod], pod: Pod) -> int:
    """Batch equals per node, over every row and a subset; returns the distinct reason count."""
    table = build_table(nodes, existing)
    plugin = NodeResourcesFit(NodeResourcesFitArgs(), FakeHandle(table))
    state = CycleState()
    plugin.pre_filter(state, pod, table)
    per_node = [(s.code, s.reasons) for s in filter_each_node(plugin, state, pod, table)]
    for rows in _rows(table):
        batch = filter_batch_as_statuses(plugin, state, pod, table, rows)
        assert [(s.code, s.reasons) for s in batch] == [per_node[r] for r in rows.tolist()]
    grouped = plugin.filter_nodes(state, pod, table, table.all_rows())
    # Reasons are built once per distinct pattern, never once per node.
    assert len(grouped.reasons) == len({reasons for code, reasons in per_node if code})
    return len(grouped.reasons)


def test_many_rejected_rows_with_few_patterns() -> None:
    # 300 nodes; every other one is full on cpu, every third has no pod slot left.
    nodes = [
        make_node(f"n{i}").capacity(cpu="1" if i % 2 else "8", memory="8Gi", pods=1).obj()
        for i in range(300)
    ]
    existing = [bound(f"e{i}", f"n{i}", cpu="500m") for i in range(0, 300, 3)]
    pod = make_pod("p").req(cpu="2", memory="1Gi").obj()
    assert assert_filter_forms_agree(nodes, existing, pod) == 3


def test_many_rejected_rows_short_of_a_late_resource() -> None:
    # 14 extended resources make pattern keys past 2**14: grouped by sorting, not counting.
    wanted = {extended(i): 1 for i in range(14)}
    nodes = []
    for i in range(200):
        offered = dict(wanted)
        if i % 2:
            offered[extended(13)] = 0
        if i % 5 == 0:
            offered[extended(12)] = 0
        nodes.append(make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods=10, **offered).obj())
    pod = make_pod("p").req(cpu="1", **wanted).obj()
    assert assert_filter_forms_agree(nodes, [], pod) == 3


def test_more_checks_than_a_packed_pattern_holds() -> None:
    wanted = {extended(i): 1 for i in range(70)}
    nodes = []
    for i in range(90):
        offered = {name: 0 if j % 30 == i % 30 else 1 for j, name in enumerate(wanted)}
        nodes.append(make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods=10, **offered).obj())
    nodes.append(make_node("roomy").capacity(cpu="4", memory="8Gi", pods=10, **wanted).obj())
    pod = make_pod("p").req(cpu="1", **wanted).obj()
    assert assert_filter_forms_agree(nodes, [], pod) == 30


def _table_of(size: int) -> NodeTable:
    return build_table([make_node(f"n{i}").obj() for i in range(size)])


@pytest.mark.parametrize(
    ("size", "rows", "want"),
    [
        (0, [], True),
        (1, [0], True),
        (5, [0, 1, 2, 3, 4], True),
        (5, [0, 1, 2, 3], False),
        (5, [1, 2, 3, 4, 0], False),
        (5, [0, 2, 1, 3, 4], False),
        (5, [0, 0, 3, 4, 4], False),
        (2, [1, 0], False),
    ],
    ids=[
        "empty",
        "single",
        "every row",
        "missing the last",
        "rotated",
        "shuffled inside",
        "repeated rows",
        "reversed",
    ],
)
def test_which_rows_count_as_every_row_in_order(size: int, rows: list[int], want: bool) -> None:
    assert covers_every_row(_table_of(size), np.asarray(rows, dtype=np.int64)) is want


# Above 2**53 float64 no longer holds every integer: the scores must still match per node.
HUGE = 2**53 + 1
HUGE_NODES = [
    make_node("big").capacity(cpu="64", memory=str(2**54 + 12345), pods=10).obj(),
    make_node("bigger").capacity(cpu="64", memory=str(2**55 - 1), pods=10).obj(),
    make_node("small").capacity(cpu="4", memory="8Gi", pods=10).obj(),
]
HUGE_PODS = [
    bound("a", "big", cpu="1", memory=str(HUGE)),
    bound("b", "bigger", cpu="3", memory=str(HUGE + 2)),
]
SCORING: list[tuple[str, Any]] = [
    ("LeastAllocated", NodeResourcesFitArgs()),
    (
        "MostAllocated",
        NodeResourcesFitArgs.model_validate({"scoringStrategy": {"type": "MostAllocated"}}),
    ),
    (
        "RequestedToCapacityRatio",
        NodeResourcesFitArgs.model_validate(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    },
                }
            }
        ),
    ),
    ("BalancedAllocation", NodeResourcesBalancedAllocationArgs()),
]


@pytest.mark.parametrize(("kind", "args"), SCORING, ids=[kind for kind, _ in SCORING])
@pytest.mark.parametrize("memory", ["1", str(HUGE)])
def test_scores_of_huge_quantities_match_per_node(kind: str, args: Any, memory: str) -> None:
    table = build_table(HUGE_NODES, HUGE_PODS)
    plugin: Any
    if kind == "BalancedAllocation":
        plugin = NodeResourcesBalancedAllocation(args, FakeHandle(table))
    else:
        plugin = NodeResourcesFit(args, FakeHandle(table))
    pod = make_pod("p").req(cpu="1", memory=memory).obj()
    state = CycleState()
    plugin.pre_score(state, pod, table, table.all_rows())
    per_node = score_each_node(plugin, state, pod, table)
    for rows in _rows(table):
        assert score_batch(plugin, state, pod, table, rows) == [per_node[r] for r in rows]
