"""Scores remembered across cycles stay equal to scores computed afresh, whatever the cache did."""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.balanced_allocation import NodeResourcesBalancedAllocation
from plugins.node_resources_fit import NodeResourcesFit
from scheduler.backend.cache import SchedulerCache
from scheduler.framework import CycleState
from scheduler.testing import FakeHandle
from scheduler.testing import make_node
from scheduler.testing import make_pod

NODES = [f"n{i}" for i in range(6)]
CPUS = ["1", "2", "4"]
POD_CPUS = ["100m", "250m", "1"]

operation = st.one_of(
    st.tuples(st.just("add-node"), st.sampled_from(NODES), st.sampled_from(CPUS)),
    st.tuples(st.just("remove-node"), st.sampled_from(NODES), st.just("")),
    st.tuples(st.just("add-pod"), st.sampled_from(NODES), st.sampled_from(POD_CPUS)),
    st.tuples(st.just("remove-pod"), st.sampled_from(NODES), st.just("")),
    st.tuples(st.just("score"), st.just(""), st.sampled_from(POD_CPUS)),
)


Scorer = NodeResourcesFit | NodeResourcesBalancedAllocation


def _plugins(handle: FakeHandle) -> list[Scorer]:
    return [NodeResourcesFit(None, handle), NodeResourcesBalancedAllocation(None, handle)]


@settings(max_examples=150, deadline=None)
@given(st.lists(operation, min_size=1, max_size=40))
def test_memoized_scores_match_fresh_ones(operations: list[tuple[str, str, str]]) -> None:
    cache = SchedulerCache()
    handle = FakeHandle(cache.table)
    long_lived = _plugins(handle)
    pods_on: dict[str, list[str]] = {}
    for serial, (kind, node, value) in enumerate(operations):
        if kind == "add-node":
            built = make_node(node).capacity(cpu=value, memory="8Gi", pods="20").obj()
            info = cache.node_info(node)
            if info is None or info.node is None:
                cache.add_node(built)
            else:
                cache.update_node(info.node, built)
        elif kind == "remove-node" and cache.node_info(node) is not None:
            info = cache.node_info(node)
            assert info is not None and info.node is not None
            cache.remove_node(info.node)
        elif kind == "add-pod":
            pod = make_pod(f"p{serial}").node(node).req(cpu=value, memory="100Mi").obj()
            cache.add_pod(pod)
            pods_on.setdefault(node, []).append(pod.key)
        elif kind == "remove-pod" and pods_on.get(node):
            key = pods_on[node].pop()
            existing = cache.get_pod(key)
            if existing is not None:
                cache.remove_pod(existing)
        elif kind == "score" and cache.table.size:
            pod = make_pod("incoming").req(cpu=value, memory="200Mi").obj()
            table = cache.table
            rows = table.all_rows()
            fresh = _plugins(handle)
            for remembered, new in zip(long_lived, fresh, strict=True):
                state = CycleState()
                remembered.pre_score(state, pod, table, rows)
                expected = new.score_nodes(state, pod, table, rows).tolist()
                assert remembered.score_nodes(state, pod, table, rows).tolist() == expected
                subset = rows[::2].copy()
                assert remembered.score_nodes(state, pod, table, subset).tolist() == (
                    new.score_nodes(state, pod, table, subset).tolist()
                )
