"""NodeResourcesFit scoring strategies, per node and batch, against hand-computed scores.

Most cases are the examples documented in upstream's strategy tests, re-expressed with our
builders (cpu in whole cores where upstream used bare numbers; only ratios matter). Each case
spells out the arithmetic so a reader can check the expectation without the code.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pytest

from plugins.helpers.resources.allocation import ScoredColumn
from plugins.helpers.resources.shape import broken_linear
from plugins.node_resources_fit import NodeResourcesFit
from plugins.node_resources_fit import NodeResourcesFitArgs
from plugins.node_resources_fit.scorer import PerResourceScorer
from plugins.node_resources_fit.scorer import Vector
from scheduler.framework import CycleState
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node

GPU = "example.com/gpu"
FOO = "intel.com/foo"
BAR = "intel.com/bar"


def node(name: str, /, **capacity: str | int) -> Node:
    return make_node(name).capacity(pods=100, **capacity).obj()


_serial = itertools.count()


def bound(node_name: str, /, **requests: str | int) -> Pod:
    """An existing pod with one container requesting exactly `requests` (possibly zero)."""
    return make_pod(f"on-{node_name}-{next(_serial)}").node(node_name).req(**requests).obj()


def empty_pod(node_name: str = "") -> Pod:
    """A pod with no containers at all: it adds nothing, not even the non-zero defaults."""
    builder = make_pod(f"empty-{node_name}").spec(containers=[])
    return (builder.node(node_name) if node_name else builder).obj()


def two_containers() -> Pod:
    # cpu 1 + 2 = 3 cores, memory 2000 + 3000 = 5000 bytes
    return make_pod("p").req(cpu="1", memory="2000").container("img", cpu="2", memory="3000").obj()


def strategy(
    kind: str, resources: list[tuple[str, int]] | None = None, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"type": kind, **extra}
    if resources is not None:
        body["resources"] = [{"name": n, "weight": w} for n, w in resources]
    return {"scoringStrategy": body}


def run_scores(args: dict[str, Any], pod: Pod, nodes: list[Node], existing: list[Pod]) -> list[int]:
    table = build_table(nodes, existing)
    plugin = NodeResourcesFit(NodeResourcesFitArgs.model_validate(args), FakeHandle(table))
    state = CycleState()
    assert plugin.pre_score(state, pod, table, table.all_rows()).is_success
    per_node = score_each_node(plugin, state, pod, table)
    assert per_node == score_batch(plugin, state, pod, table)
    # Without PreScore the plugin computes the pod's requests itself, with the same result.
    assert score_each_node(plugin, CycleState(), pod, table) == per_node
    return per_node


@dataclass
class ScoreCase:
    id: str
    pod: Pod
    nodes: list[Node]
    want: list[int]
    existing: list[Pod] = field(default_factory=list)
    resources: list[tuple[str, int]] | None = None


LEAST = [
    ScoreCase(
        # cpu (4-0)*100/4 = 100, memory 100 -> 100 on both nodes
        "nothing scheduled, nothing requested",
        empty_pod(),
        [node("n1", cpu="4", memory="10000"), node("n2", cpu="4", memory="10000")],
        [100, 100],
    ),
    ScoreCase(
        # n1: cpu (4-3)*100/4 = 25, memory (10000-5000)*100/10000 = 50 -> 75/2 = 37
        # n2: cpu (6-3)*100/6 = 50, memory 50 -> 50
        "differently sized nodes",
        two_containers(),
        [node("n1", cpu="4", memory="10000"), node("n2", cpu="6", memory="10000")],
        [37, 50],
    ),
    ScoreCase(
        # n1: cpu (10-6)*100/10 = 40, memory (20000-5000)*100/20000 = 75 -> 57
        # n2: cpu 40, memory (50000-10000)*100/50000 = 80 -> 60
        "pods scheduled with resources, differently sized nodes",
        two_containers(),
        [node("n1", cpu="10", memory="20000"), node("n2", cpu="10", memory="50000")],
        [57, 60],
        existing=[bound("n1", cpu="3", memory="0"), bound("n2", cpu="3", memory="5000")],
    ),
    ScoreCase(
        # cpu 3+3 > 4 scores 0; memory n1 100, n2 (10000-5000)*100/10000 = 50 -> 50, 25
        "requested cpu exceeds the node",
        make_pod("p").req(cpu="3", memory="0").obj(),
        [node("n1", cpu="4", memory="10000"), node("n2", cpu="4", memory="10000")],
        [50, 25],
        existing=[bound("n1", cpu="3", memory="0"), bound("n2", cpu="3", memory="5000")],
    ),
    ScoreCase(
        # n1: (25*1 + 50*2) / 3 = 41;  n2: (50*1 + 50*2) / 3 = 50
        "weights",
        two_containers(),
        [node("n1", cpu="4", memory="10000"), node("n2", cpu="6", memory="10000")],
        [41, 50],
        resources=[("memory", 2), ("cpu", 1)],
    ),
    ScoreCase(
        # gpu is not requested, so it is left out: cpu 50, memory 50 on both
        "an extended resource the pod does not request is skipped",
        make_pod("p").req(cpu="3", memory="5000").obj(),
        [node("n1", cpu="6", memory="10000"), node("n2", cpu="6", memory="10000", **{GPU: 4})],
        [50, 50],
        resources=[("cpu", 1), ("memory", 1), (GPU, 1)],
    ),
    ScoreCase(
        # gpu n1 (4-2)*100/4 = 50, n2 (10-2)*100/10 = 80 -> (50+50+50)/3, (50+50+80)/3
        "an extended resource the pod requests counts",
        make_pod("p").req(cpu="3", memory="5000", **{GPU: 2}).obj(),
        [
            node("n1", cpu="6", memory="10000", **{GPU: 4}),
            node("n2", cpu="6", memory="10000", **{GPU: 10}),
        ],
        [50, 60],
        resources=[("cpu", 1), ("memory", 1), (GPU, 1)],
    ),
    ScoreCase(
        # the pod requests no gpu: cpu 50, memory (10000-4000)*100/10000 = 60 -> 55 on both
        "a weighted resource the node does not offer is skipped",
        make_pod("p").req(cpu="3", memory="4000").obj(),
        [node("n1", cpu="6", memory="10000"), node("n2", cpu="6", memory="10000", **{GPU: 4})],
        [55, 55],
        resources=[(GPU, 2), ("cpu", 1), ("memory", 1)],
    ),
    ScoreCase(
        # no requests count as 100m cpu and 200Mi memory (non-zero defaults):
        # cpu (1000-100)*100/1000 = 90, memory (1000Mi-200Mi)*100/1000Mi = 80 -> 85
        "non-zero defaults for a pod without requests",
        make_pod("p").obj(),
        [node("n1", cpu="1", memory="1000Mi")],
        [85],
    ),
    ScoreCase(
        # existing pod without requests counts 100m / 200Mi too: cpu (1000-200)*100/1000 = 80,
        # memory (1000Mi-400Mi)*100/1000Mi = 60 -> 70
        "non-zero defaults for existing pods",
        make_pod("p").obj(),
        [node("n1", cpu="1", memory="1000Mi")],
        [70],
        existing=[make_pod("a").node("n1").obj()],
    ),
    ScoreCase(
        # explicit zero cpu/memory requests stay zero (defaults only fill missing ones):
        # cpu 100, memory 100; ephemeral-storage (100-30-20)*100/100 = 50 -> 250/3 = 83
        "ephemeral-storage",
        make_pod("p").req(cpu="0", memory="0", **{"ephemeral-storage": 20}).obj(),
        [node("n1", cpu="1", memory="1Gi", **{"ephemeral-storage": 100})],
        [83],
        existing=[bound("n1", cpu="0", memory="0", **{"ephemeral-storage": 30})],
        resources=[("cpu", 1), ("memory", 1), ("ephemeral-storage", 1)],
    ),
    ScoreCase(
        "a node offering none of the resources scores 0",
        make_pod("p").obj(),
        [node("n1")],
        [0],
    ),
]

MOST = [
    ScoreCase(
        # n1: cpu 3*100/4 = 75, memory 5000*100/10000 = 50 -> 62;  n2: cpu 50, memory 50 -> 50
        "differently sized nodes",
        two_containers(),
        [node("n1", cpu="4", memory="10000"), node("n2", cpu="6", memory="10000")],
        [62, 50],
    ),
    ScoreCase(
        # cpu 3+3 is clamped to 4 -> 100; memory n1 0, n2 50 -> 50, 75
        "requested beyond the node is clamped",
        make_pod("p").req(cpu="3", memory="0").obj(),
        [node("n1", cpu="4", memory="10000"), node("n2", cpu="4", memory="10000")],
        [50, 75],
        existing=[bound("n1", cpu="3", memory="0"), bound("n2", cpu="3", memory="5000")],
    ),
    ScoreCase(
        # n1: (75*1 + 50*2) / 3 = 58;  n2: (50 + 100) / 3 = 50
        "weights",
        two_containers(),
        [node("n1", cpu="4", memory="10000"), node("n2", cpu="6", memory="10000")],
        [58, 50],
        resources=[("memory", 2), ("cpu", 1)],
    ),
    ScoreCase(
        # gpu 2*100/4 = 50 and 2*100/10 = 20; cpu 50, memory 50 -> 50, 40
        "extended resource",
        make_pod("p").req(cpu="3", memory="5000", **{GPU: 2}).obj(),
        [
            node("n1", cpu="6", memory="10000", **{GPU: 4}),
            node("n2", cpu="6", memory="10000", **{GPU: 10}),
        ],
        [50, 40],
        resources=[("cpu", 1), ("memory", 1), (GPU, 1)],
    ),
]

SHAPE_LEAST = {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}
SHAPE_MOST = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]}

RATIO = [
    (
        SHAPE_LEAST,
        ScoreCase(
            # shape scaled to (0,100) -> (100,0): utilization 0 scores 100 everywhere
            "nothing requested",
            empty_pod(),
            [node("n1", cpu="4", memory="10000"), node("n2", cpu="4", memory="10000")],
            [100, 100],
            existing=[empty_pod("n1")],
        ),
    ),
    (
        SHAPE_LEAST,
        ScoreCase(
            # n1: cpu 3*100/4 = 75 -> 100-75 = 25, memory 50 -> 50; mean 37.5 rounds up to 38
            # n2: cpu 50 -> 50, memory 50 -> 50
            "rounding half away from zero",
            two_containers(),
            [node("n1", cpu="4", memory="10000"), node("n2", cpu="6", memory="10000")],
            [38, 50],
        ),
    ),
    (
        SHAPE_MOST,
        ScoreCase(
            # shape (0,0) -> (100,10): foo 2/8 = 25% -> 2 (2.5 truncated), 2/4 = 50% -> 5
            "single extended resource",
            make_pod("p").req(**{FOO: 2}).obj(),
            [node("n1", cpu="4", **{FOO: 8}), node("n2", cpu="4", **{FOO: 4})],
            [2, 5],
            resources=[(FOO, 1)],
        ),
    ),
    (
        SHAPE_MOST,
        ScoreCase(
            # n2 already runs 2 foo: (2+2)/4 = 100% -> 10
            "single extended resource on a busy node",
            make_pod("p").req(**{FOO: 2}).obj(),
            [node("n1", cpu="4", **{FOO: 8}), node("n2", cpu="4", **{FOO: 4})],
            [2, 10],
            existing=[bound("n2", **{FOO: 2})],
            resources=[(FOO, 1)],
        ),
    ),
    (
        SHAPE_MOST,
        ScoreCase(
            # the pod does not request foo: nothing left to score
            "extended resource not requested",
            empty_pod(),
            [node("n1", cpu="4", **{FOO: 8})],
            [0],
            resources=[(FOO, 1)],
        ),
    ),
    (
        SHAPE_MOST,
        ScoreCase(
            # n1: foo 2/8 -> 2 (weight 3), bar 2/4 -> 5 (weight 5): 31/8 = 3.875 -> 4
            # n2: foo 2/4 -> 5 (weight 3), bar 2/8 -> 2 (weight 5): 25/8 = 3.125 -> 3
            "weighted extended resources",
            make_pod("p").req(**{FOO: 2, BAR: 2}).obj(),
            [node("n1", cpu="4", **{FOO: 8, BAR: 4}), node("n2", cpu="4", **{FOO: 4, BAR: 8})],
            [4, 3],
            resources=[(FOO, 3), (BAR, 5)],
        ),
    ),
    (
        SHAPE_LEAST,
        ScoreCase(
            # cpu 100% -> 0 is left out of the mean (only positive scores count):
            # memory 0% -> 100, so the node scores 100, not 50
            "zero-score resources do not dilute the mean",
            make_pod("p").req(cpu="4", memory="0").obj(),
            [node("n1", cpu="4", memory="10000")],
            [100],
        ),
    ),
]


def _ids(cases: list[ScoreCase]) -> list[str]:
    return [c.id for c in cases]


@pytest.mark.parametrize("case", LEAST, ids=_ids(LEAST))
def test_least_allocated(case: ScoreCase) -> None:
    args = strategy("LeastAllocated", case.resources)
    assert run_scores(args, case.pod, case.nodes, case.existing) == case.want


def test_least_allocated_is_the_default() -> None:
    case = LEAST[1]
    assert run_scores({}, case.pod, case.nodes, case.existing) == case.want


@pytest.mark.parametrize("case", MOST, ids=_ids(MOST))
def test_most_allocated(case: ScoreCase) -> None:
    args = strategy("MostAllocated", case.resources)
    assert run_scores(args, case.pod, case.nodes, case.existing) == case.want


@pytest.mark.parametrize(("shape", "case"), RATIO, ids=[c.id for _, c in RATIO])
def test_requested_to_capacity_ratio(shape: dict[str, Any], case: ScoreCase) -> None:
    args = strategy("RequestedToCapacityRatio", case.resources, requestedToCapacityRatio=shape)
    assert run_scores(args, case.pod, case.nodes, case.existing) == case.want


SHAPES = [
    # (points, [(utilization, value)]) from upstream's broken-linear examples
    (
        ((10, 1), (90, 9)),
        [(-10, 1), (0, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (100, 9)],
    ),
    (
        ((0, 2), (40, 10), (100, 0)),
        [(0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
    ),
    (((0, 2), (40, 2), (100, 2)), [(0, 2), (40, 2), (70, 2), (110, 2)]),
    # a falling segment divides toward zero as Go does: 10 + (-10 * 1) / 3 = 10 - 3 = 7
    (((0, 10), (3, 0)), [(1, 7), (2, 4), (3, 0)]),
]


@pytest.mark.parametrize(("points", "expectations"), SHAPES)
def test_broken_linear_function(
    points: tuple[tuple[int, int], ...], expectations: list[tuple[int, int]]
) -> None:
    assert [broken_linear(points, u) for u, _ in expectations] == [v for _, v in expectations]


def test_score_extensions_are_absent() -> None:
    assert NodeResourcesFit(NodeResourcesFitArgs(), FakeHandle()).score_extensions() is None


def test_score_sums_containers_even_where_the_pod_sets_pod_level_requests() -> None:
    """Upstream's Fit scorer is built without pod-level resources; only Filter uses them."""
    nodes = [node("n1", cpu="4", memory="4000")]
    containers_only = make_pod("p").req(cpu="1", memory="1000").obj()
    pod_level = (
        make_pod("p")
        .req(cpu="1", memory="1000")
        .spec(resources={"requests": {"cpu": "3", "memory": "3000"}})
        .obj()
    )
    # LeastAllocated on the containers' 1 of 4 cores and 1000 of 4000 bytes: (75 + 75) / 2.
    assert run_scores({}, containers_only, nodes, []) == [75]
    assert run_scores({}, pod_level, nodes, []) == [75]


def _halved(requested: int, allocatable: int) -> int:
    return requested // 2


def _halved_column(column: ScoredColumn) -> Vector:
    halved: Vector = (column.allocated + column.pod_request) // 2
    return halved


def test_per_resource_scorer_weights_each_resource_and_skips_what_a_node_lacks() -> None:
    scorer = PerResourceScorer([1, 3], _halved, _halved_column)
    # (10//2 x 1 + 30//2 x 3) // 4 = (5 + 45) // 4 = 12
    assert scorer.score([10, 30], [100, 100]) == 12
    # The second resource is not on the node: only the first counts, 5 x 1 // 1 = 5
    assert scorer.score([10, 30], [100, 0]) == 5
    assert scorer.score([10, 30], [0, 0]) == 0


def test_per_resource_scorer_row_form_agrees_with_the_node_form() -> None:
    scorer = PerResourceScorer([1, 3], _halved, _halved_column)
    allocatable = [np.array([100, 100, 0]), np.array([100, 0, 0])]
    allocated = [np.array([4, 8, 2]), np.array([20, 6, 0])]
    pod_request = [6, 10]
    columns = [
        ScoredColumn(i, allocatable[i], allocated[i], pod_request[i], offered_everywhere=False)
        for i in range(2)
    ]
    rows = scorer.score_columns(columns, 3)
    for row in range(3):
        requested = [int(allocated[i][row]) + pod_request[i] for i in range(2)]
        offered = [int(allocatable[i][row]) for i in range(2)]
        assert rows[row] == scorer.score(requested, offered)
    assert rows.tolist() == [12, 7, 0]
