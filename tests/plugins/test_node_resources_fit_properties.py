"""Generated clusters: NodeResourcesFit's batch forms agree with its per-node forms exactly,
over every row and over any other selection of rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.helpers.resources.allocation import pod_requests_for
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
from tests.plugins.resource_oracles import rows_allocation
from tests.plugins.resource_oracles import score_rows
from tests.plugins.row_selections import draw_rows

GPU = "example.com/gpu"
FPGA = "example.com/fpga"
HUGEPAGES = "hugepages-2Mi"

# Any: the builders take requests as **kwargs next to typed keyword parameters.
Requests = dict[str, Any]


def _maybe(key: str, values: st.SearchStrategy[str | int]) -> st.SearchStrategy[Requests]:
    return st.one_of(st.just({}), values.map(lambda v: {key: v}))


# Coarse grids make equalities (request == free, request == allocatable, exact .5 means) common,
# which is where off-by-one mistakes between the two forms would hide.
CPU_MILLI = st.sampled_from([0, 100, 500, 1000, 1500, 2000, 4000])
MEMORY_MI = st.sampled_from([0, 200, 512, 1024, 2048, 4096])
STORAGE_GI = st.sampled_from([0, 1, 5, 10, 20])
COUNT = st.integers(0, 4)
HUGEPAGES_MI = st.sampled_from([0, 2, 4, 8])


def _fields(*parts: st.SearchStrategy[Requests]) -> st.SearchStrategy[Requests]:
    return st.tuples(*parts).map(lambda ds: {k: v for d in ds for k, v in d.items()})


def requests() -> st.SearchStrategy[Requests]:
    return _fields(
        _maybe("cpu", CPU_MILLI.map(lambda m: f"{m}m")),
        _maybe("memory", MEMORY_MI.map(lambda m: f"{m}Mi")),
        _maybe("ephemeral-storage", STORAGE_GI.map(lambda g: f"{g}Gi")),
        _maybe(GPU, COUNT),
        _maybe(FPGA, st.integers(0, 2)),
        _maybe(HUGEPAGES, HUGEPAGES_MI.map(lambda n: f"{n}Mi")),
    )


def capacity() -> st.SearchStrategy[Requests]:
    return _fields(
        _maybe("cpu", CPU_MILLI.map(lambda m: f"{2 * m}m")),
        _maybe("memory", MEMORY_MI.map(lambda m: f"{2 * m}Mi")),
        _maybe("ephemeral-storage", STORAGE_GI.map(lambda g: f"{2 * g}Gi")),
        _maybe("pods", st.integers(0, 6)),
        _maybe(GPU, COUNT),
        _maybe(FPGA, st.integers(0, 2)),
        _maybe(HUGEPAGES, HUGEPAGES_MI.map(lambda n: f"{n}Mi")),
    )


def pod_from(name: str, shape: str, reqs: Requests, init: Requests, node_name: str = "") -> Pod:
    builder = make_pod(name)
    if node_name:
        builder = builder.node(node_name)
    if shape == "no-containers":
        builder = builder.spec(containers=[])
    elif reqs:
        builder = builder.req(**reqs)
    if init and shape == "init":
        builder = builder.init_container(**init)
    if init and shape == "sidecar":
        builder = builder.init_container(sidecar=True, **init)
    return builder.obj()


def pods(node_name: st.SearchStrategy[str], prefix: str) -> st.SearchStrategy[Pod]:
    return st.builds(
        pod_from,
        st.uuids().map(lambda u: f"{prefix}-{u.hex[:8]}"),
        st.sampled_from(["plain", "plain", "no-containers", "init", "sidecar"]),
        requests(),
        requests(),
        node_name,
    )


@dataclass
class Cluster:
    nodes: list[Node]
    existing: list[Pod]
    pod: Pod

    def table(self) -> NodeTable:
        return build_table(self.nodes, self.existing)


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    capacities = draw(st.lists(capacity(), min_size=1, max_size=6))
    if draw(st.booleans()):
        # Every node offers cpu and memory: the batch forms' no-mask path.
        for c in capacities:
            c.setdefault("cpu", "1500m")
            c.setdefault("memory", "1Gi")
    nodes = [make_node(f"n{i}").capacity(**c).obj() for i, c in enumerate(capacities)]
    names = st.sampled_from([n.name for n in nodes])
    existing = draw(st.lists(pods(names, "e"), max_size=8))
    pod = draw(pods(st.just(""), "p"))
    return Cluster(nodes, existing, pod)


ignore_args = st.sampled_from(
    [
        {},
        {"ignoredResources": [GPU]},
        {"ignoredResourceGroups": ["example.com"]},
        {"ignoredResources": [HUGEPAGES]},
    ]
)

SCORED = ["cpu", "memory", "ephemeral-storage", GPU, HUGEPAGES, "foo"]
strategy_args = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
        "resources": st.lists(
            st.fixed_dictionaries(
                {"name": st.sampled_from(SCORED), "weight": st.sampled_from([1, 1, 2, 3, 100])}
            ),
            min_size=1,
            max_size=4,
        ),
        "requestedToCapacityRatio": st.lists(
            st.tuples(st.sampled_from([0, 10, 25, 50, 75, 100]), st.integers(0, 10)),
            min_size=1,
            max_size=4,
        ).map(
            lambda points: {
                "shape": [{"utilization": u, "score": s} for u, s in sorted(dict(points).items())]
            }
        ),
    }
).map(
    # As upstream, a shape is given only with the type that uses it.
    lambda strategy: (
        strategy
        if strategy["type"] == "RequestedToCapacityRatio"
        else {k: v for k, v in strategy.items() if k != "requestedToCapacityRatio"}
    )
)


def _plugin(args: dict[str, Any], table: NodeTable) -> NodeResourcesFit:
    return NodeResourcesFit(NodeResourcesFitArgs.model_validate(args), FakeHandle(table))


@settings(max_examples=150, deadline=None)
@given(clusters(), ignore_args)
def test_filter_forms_agree(cluster: Cluster, args: dict[str, Any]) -> None:
    table = cluster.table()
    plugin = _plugin(args, table)
    state = CycleState()
    plugin.pre_filter(state, cluster.pod, table)
    per_node = filter_each_node(plugin, state, cluster.pod, table)
    batch = filter_batch_as_statuses(plugin, state, cluster.pod, table)
    assert [(s.code, s.reasons) for s in batch] == [(s.code, s.reasons) for s in per_node]


@settings(max_examples=150, deadline=None)
@given(clusters(), strategy_args)
def test_score_forms_agree(cluster: Cluster, strategy: dict[str, Any]) -> None:
    table = cluster.table()
    plugin = _plugin({"scoringStrategy": strategy}, table)
    state = CycleState()
    plugin.pre_score(state, cluster.pod, table, table.all_rows())
    per_node = score_each_node(plugin, state, cluster.pod, table)
    assert score_batch(plugin, state, cluster.pod, table) == per_node
    assert all(0 <= score <= 100 for score in per_node)


@settings(max_examples=50, deadline=None)
@given(clusters())
def test_batch_over_a_subset_of_rows_matches_the_full_batch(cluster: Cluster) -> None:
    table = cluster.table()
    plugin = _plugin({}, table)
    state = CycleState()
    plugin.pre_filter(state, cluster.pod, table)
    plugin.pre_score(state, cluster.pod, table, table.all_rows())
    rows = table.all_rows()[::2]
    full = plugin.filter_nodes(state, cluster.pod, table, table.all_rows())
    part = plugin.filter_nodes(state, cluster.pod, table, rows)
    assert [int(c) for c in part.codes] == [int(full.codes[r]) for r in rows]
    assert [part.reasons_at(i) for i in range(len(rows)) if part.codes[i]] == [
        full.reasons_at(int(r)) for r in rows if full.codes[r]
    ]
    all_scores = plugin.score_nodes(state, cluster.pod, table, table.all_rows())
    assert list(plugin.score_nodes(state, cluster.pod, table, rows)) == list(all_scores[rows])


@settings(max_examples=150, deadline=None)
@given(clusters(), ignore_args, st.data())
def test_filter_over_any_rows_matches_per_node(
    cluster: Cluster, args: dict[str, Any], data: st.DataObject
) -> None:
    table = cluster.table()
    plugin = _plugin(args, table)
    state = CycleState()
    plugin.pre_filter(state, cluster.pod, table)
    per_node = filter_each_node(plugin, state, cluster.pod, table)
    rows = draw_rows(data, table.size)
    batch = filter_batch_as_statuses(plugin, state, cluster.pod, table, rows)
    want = [per_node[row] for row in rows.tolist()]
    assert [(s.code, s.reasons) for s in batch] == [(s.code, s.reasons) for s in want]


@settings(max_examples=150, deadline=None)
@given(clusters(), strategy_args, st.data())
def test_scores_over_any_rows_match_per_node(
    cluster: Cluster, strategy: dict[str, Any], data: st.DataObject
) -> None:
    table = cluster.table()
    plugin = _plugin({"scoringStrategy": strategy}, table)
    state = CycleState()
    rows = draw_rows(data, table.size)
    plugin.pre_score(state, cluster.pod, table, rows)
    per_node = score_each_node(plugin, state, cluster.pod, table)
    want = [per_node[row] for row in rows.tolist()]
    assert score_batch(plugin, state, cluster.pod, table, rows) == want


@settings(max_examples=50, deadline=None)
@given(clusters(), strategy_args)
def test_matrix_form_of_the_scorers_matches_the_column_form(
    cluster: Cluster, strategy: dict[str, Any]
) -> None:
    table = cluster.table()
    args = NodeResourcesFitArgs.model_validate({"scoringStrategy": strategy})
    plugin = NodeResourcesFit(args, FakeHandle(table))
    state = CycleState()
    plugin.pre_score(state, cluster.pod, table, table.all_rows())
    names = [r.name for r in args.scoring_strategy.resources]
    pod_requests = pod_requests_for(cluster.pod, names, use_requested=False)
    matrices = rows_allocation(table, table.all_rows(), names, pod_requests, use_requested=False)
    by_matrix = score_rows(args.scoring_strategy, matrices.requested, matrices.allocatable)
    assert list(by_matrix) == score_batch(plugin, state, cluster.pod, table)
