"""NodeResourcesBalancedAllocation: args, hand-computed scores, best-effort skip, and agreement
of the batch and per-node forms on generated clusters.

Scores follow kube-scheduler v1.36: balance(v) = int((1 - std(fractions of v)) * 100) with each
fraction requested/allocatable capped at 1, and
    score = 50 + (50 + balance(with pod) - balance(without pod)) / 2.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import ValidationError

from plugins.balanced_allocation import SPEC
from plugins.balanced_allocation import NodeResourcesBalancedAllocation
from plugins.balanced_allocation import NodeResourcesBalancedAllocationArgs
from plugins.balanced_allocation.balance import balance
from plugins.helpers.resources.allocation import pod_requests_for
from scheduler.framework import CycleState
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node
from tests.plugins.resource_oracles import balanced_allocation_score_rows
from tests.plugins.resource_oracles import rows_allocation
from tests.plugins.row_selections import draw_rows

GPU = "example.com/gpu"
FPGA = "example.com/fpga"


def node(name: str, /, **capacity: str | int) -> Node:
    return make_node(name).capacity(pods=100, **capacity).obj()


_serial = itertools.count()


def bound(node_name: str, /, **requests: str | int) -> Pod:
    return make_pod(f"on-{node_name}-{next(_serial)}").node(node_name).req(**requests).obj()


def plugin_for(
    args: dict[str, Any] | None, nodes: list[Node], existing: list[Pod]
) -> tuple[NodeResourcesBalancedAllocation, Any]:
    table = build_table(nodes, existing)
    args_model = NodeResourcesBalancedAllocationArgs.model_validate(args or {})
    return NodeResourcesBalancedAllocation(args_model, FakeHandle(table)), table


def run_scores(
    pod: Pod, nodes: list[Node], existing: list[Pod], args: dict[str, Any] | None = None
) -> list[int]:
    plugin, table = plugin_for(args, nodes, existing)
    state = CycleState()
    assert plugin.pre_score(state, pod, table, table.all_rows()).is_success
    per_node = score_each_node(plugin, state, pod, table)
    assert score_batch(plugin, state, pod, table) == per_node
    assert score_each_node(plugin, CycleState(), pod, table) == per_node
    return per_node


@dataclass
class Case:
    id: str
    pod: Pod
    nodes: list[Node]
    want: list[int]
    existing: list[Pod] = field(default_factory=list)
    args: dict[str, Any] | None = None


CASES = [
    Case(
        # before: cpu 1/4, memory 1/4 -> std 0 -> 100; after: 2/4, 2/4 -> 100
        # 50 + (50 + 100 - 100) / 2 = 75: an unchanged balance scores 75
        "balance unchanged",
        make_pod("p").req(cpu="1", memory="1Gi").obj(),
        [node("n1", cpu="4", memory="4Gi")],
        [75],
        existing=[bound("n1", cpu="1", memory="1Gi")],
    ),
    Case(
        # before: 2/4, 0 -> std 0.25 -> 75; after: 2/4, 2/4 -> 100; 50 + (50 + 25) / 2 = 87
        "pod evens the node out",
        make_pod("p").req(memory="2Gi").obj(),
        [node("n1", cpu="4", memory="4Gi")],
        [87],
        existing=[bound("n1", cpu="2")],
    ),
    Case(
        # before: 0, 0 -> 100; after: 2/4, 0 -> 75; 50 + (50 - 25) / 2 = 62
        "pod unbalances an empty node",
        make_pod("p").req(cpu="2").obj(),
        [node("n1", cpu="4", memory="4Gi")],
        [62],
    ),
    Case(
        # before: 3/6, 0 -> 75; after: 7.5/6 capped at 1, 0 -> std 0.5 -> 50
        # 50 + (50 + 50 - 75) / 2 = 62
        "fractions are capped at 1",
        make_pod("p").req(cpu="4500m").obj(),
        [node("n1", cpu="6", memory="4Gi")],
        [62],
        existing=[bound("n1", cpu="1"), bound("n1", cpu="2")],
    ),
    Case(
        # three resources, after: 1/4, 2/4, 4/4 -> mean 0.5833, std 0.3118 -> 68;
        # before: all 0 -> 100; 50 + (50 + 68 - 100) / 2 = 59
        "extended resource requested by the pod",
        make_pod("p").req(cpu="1", memory="2Gi", **{GPU: "4"}).obj(),
        [node("n1", cpu="4", memory="4Gi", **{GPU: 4})],
        [59],
        args={"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
    ),
    Case(
        # gpu not requested: only cpu and memory count -> same as "pod evens the node out"
        "extended resource the pod does not request is left out",
        make_pod("p").req(memory="2Gi").obj(),
        [node("n1", cpu="4", memory="4Gi", **{GPU: 4})],
        [87],
        existing=[bound("n1", cpu="2", **{GPU: "3"})],
        args={"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
    ),
    Case(
        # plain requests, not the non-zero defaults: the existing pod without requests adds
        # nothing; before: 0, 0 -> 100; after 1/4, 0 -> 87; 50 + (50 - 13) / 2 = 68
        "existing pods without requests count as zero",
        make_pod("p").req(cpu="1").obj(),
        [node("n1", cpu="4", memory="4Gi")],
        [68],
        existing=[make_pod("a").node("n1").obj()],
    ),
    Case(
        # the node offers no memory: one fraction, std 0, before and after -> 75
        "single offered resource",
        make_pod("p").req(cpu="1", memory="1Gi").obj(),
        [node("n1", cpu="4")],
        [75],
    ),
    Case(
        # several nodes at once
        "nodes ranked by the change they would see",
        make_pod("p").req(memory="2Gi").obj(),
        [node("even", cpu="4", memory="4Gi"), node("cpu-heavy", cpu="4", memory="4Gi")],
        [62, 87],
        existing=[bound("cpu-heavy", cpu="2")],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_scores(case: Case) -> None:
    assert run_scores(case.pod, case.nodes, case.existing, case.args) == case.want


BALANCES = [
    # (requested, allocatable, balance): the without-pod / with-pod building block
    ([0, 0], [4, 4], 100),
    ([2, 0], [4, 4], 75),
    ([4, 0], [4, 4], 50),
    ([8, 0], [4, 4], 50),  # capped at 1
    ([1, 2, 4], [4, 4, 4], 68),
    ([3, 1], [4, 0], 100),  # a resource the node lacks is skipped
    ([], [], 100),
]


@pytest.mark.parametrize(("requested", "allocatable", "want"), BALANCES)
def test_balance(requested: list[int], allocatable: list[int], want: int) -> None:
    assert balance(requested, allocatable) == want


def test_best_effort_pod_skips_scoring() -> None:
    plugin, table = plugin_for(None, [node("n1", cpu="4", memory="4Gi")], [])
    pod = make_pod("p").obj()  # no requests at all: best effort
    state = CycleState()
    assert plugin.pre_score(state, pod, table, table.all_rows()).is_skip
    assert score_each_node(plugin, state, pod, table) == [0]
    assert score_batch(plugin, state, pod, table) == [0]


def test_pod_requesting_only_unscored_resources_is_best_effort() -> None:
    plugin, table = plugin_for(None, [node("n1", cpu="4", memory="4Gi", **{GPU: 1})], [])
    pod = make_pod("p").req(**{GPU: "1"}).obj()
    assert plugin.pre_score(CycleState(), pod, table, table.all_rows()).is_skip


def test_spec() -> None:
    assert SPEC.name == "NodeResourcesBalancedAllocation"
    assert SPEC.args_model is NodeResourcesBalancedAllocationArgs
    assert set(SPEC.extension_points) == {"PreScore", "Score"}
    plugin, _ = plugin_for(None, [], [])
    assert plugin.score_extensions() is None


# ---- args ---------------------------------------------------------------------------------


def test_default_args() -> None:
    args = NodeResourcesBalancedAllocationArgs()
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]
    empty = NodeResourcesBalancedAllocationArgs.model_validate({"resources": []})
    assert [r.name for r in empty.resources] == ["cpu", "memory"]
    zero = NodeResourcesBalancedAllocationArgs.model_validate(
        {"resources": [{"name": GPU, "weight": 0}]}
    )
    assert [(r.name, r.weight) for r in zero.resources] == [(GPU, 1)]


INVALID_ARGS = [
    (
        "weight other than 1",
        {"resources": [{"name": "cpu", "weight": 2}]},
        [(("resources", 0, "weight"), "Invalid value: 2: must be 1")],
    ),
    (
        "duplicate resource",
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "cpu"}]},
        [(("resources", 2, "name"), 'Duplicate value: "cpu"')],
    ),
    (
        "both problems at once",
        {"resources": [{"name": "cpu", "weight": 3}, {"name": "cpu", "weight": 1}]},
        [
            (("resources", 0, "weight"), "Invalid value: 3: must be 1"),
            (("resources", 1, "name"), 'Duplicate value: "cpu"'),
        ],
    ),
    (
        "unknown field",
        {"resource": []},
        [(("resource",), "Extra inputs are not permitted")],
    ),
]


@pytest.mark.parametrize(
    ("raw", "want"), [c[1:] for c in INVALID_ARGS], ids=[c[0] for c in INVALID_ARGS]
)
def test_invalid_args(raw: dict[str, Any], want: list[tuple[tuple[Any, ...], str]]) -> None:
    with pytest.raises(ValidationError) as caught:
        NodeResourcesBalancedAllocationArgs.model_validate(raw)
    assert [(tuple(e["loc"]), e["msg"]) for e in caught.value.errors()] == want


# ---- batch and per-node forms agree -------------------------------------------------------

# Coarse grids make ties and capped fractions common.
CPU = st.sampled_from(["0", "100m", "500m", "1", "2", "4"])
MEMORY = st.sampled_from(["0", "256Mi", "1Gi", "2Gi", "4Gi"])
COUNT = st.sampled_from(["0", "1", "2", "4"])


def _maybe(key: str, values: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, str]]:
    return st.one_of(st.just({}), values.map(lambda v: {key: v}))


def _requests() -> st.SearchStrategy[dict[str, str]]:
    parts = (
        _maybe("cpu", CPU),
        _maybe("memory", MEMORY),
        _maybe(GPU, COUNT),
        _maybe(FPGA, COUNT),
    )
    return st.tuples(*parts).map(lambda ds: {k: v for d in ds for k, v in d.items()})


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod], Pod]:
    capacities = draw(st.lists(_requests(), min_size=1, max_size=6))
    if draw(st.booleans()):
        # Every node offers cpu and memory: the batch form's no-mask path.
        for c in capacities:
            c.setdefault("cpu", "2")
            c.setdefault("memory", "2Gi")
    nodes = [node(f"n{i}", **c) for i, c in enumerate(capacities)]
    existing = []
    for i, requests in enumerate(draw(st.lists(_requests(), max_size=8))):
        target = draw(st.sampled_from(nodes)).name
        builder = make_pod(f"e{i}").node(target)
        existing.append((builder.req(**requests) if requests else builder).obj())
    requests = draw(_requests())
    pod = (make_pod("p").req(**requests) if requests else make_pod("p")).obj()
    return nodes, existing, pod


resource_sets = st.sampled_from(
    [
        None,
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
        {"resources": [{"name": "cpu"}]},
        {"resources": [{"name": "memory"}, {"name": GPU}, {"name": "ephemeral-storage"}]},
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}, {"name": FPGA}]},
    ]
)


@settings(max_examples=150, deadline=None)
@given(clusters(), resource_sets)
def test_forms_agree(
    cluster: tuple[list[Node], list[Pod], Pod], args: dict[str, Any] | None
) -> None:
    nodes, existing, pod = cluster
    plugin, table = plugin_for(args, nodes, existing)
    state = CycleState()
    plugin.pre_score(state, pod, table, table.all_rows())
    per_node = score_each_node(plugin, state, pod, table)
    assert score_batch(plugin, state, pod, table) == per_node
    assert all(0 <= score <= 100 for score in per_node)


@settings(max_examples=150, deadline=None)
@given(clusters(), resource_sets, st.data())
def test_forms_agree_over_any_rows(
    cluster: tuple[list[Node], list[Pod], Pod], args: dict[str, Any] | None, data: st.DataObject
) -> None:
    nodes, existing, pod = cluster
    plugin, table = plugin_for(args, nodes, existing)
    state = CycleState()
    rows = draw_rows(data, table.size)
    plugin.pre_score(state, pod, table, rows)
    per_node = score_each_node(plugin, state, pod, table)
    want = [per_node[row] for row in rows.tolist()]
    assert score_batch(plugin, state, pod, table, rows) == want


@settings(max_examples=50, deadline=None)
@given(clusters(), resource_sets)
def test_matrix_form_matches_the_column_form(
    cluster: tuple[list[Node], list[Pod], Pod], args: dict[str, Any] | None
) -> None:
    nodes, existing, pod = cluster
    plugin, table = plugin_for(args, nodes, existing)
    state = CycleState()
    if not plugin.pre_score(state, pod, table, table.all_rows()).is_success:
        return  # best effort: nothing is scored
    names = [
        r.name for r in NodeResourcesBalancedAllocationArgs.model_validate(args or {}).resources
    ]
    requests = pod_requests_for(pod, names, use_requested=True)
    matrices = rows_allocation(table, table.all_rows(), names, requests, use_requested=True)
    by_matrix = balanced_allocation_score_rows(
        matrices.requested, matrices.allocated, matrices.allocatable
    )
    assert list(by_matrix) == score_batch(plugin, state, pod, table)
