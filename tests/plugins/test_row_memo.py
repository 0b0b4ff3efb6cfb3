"""Scores and fit checks remembered across cycles stay equal to ones computed afresh, whatever
the cache did."""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.balanced_allocation import NodeResourcesBalancedAllocation
from plugins.helpers.resources.allocation import FEW_REFRESHED_ROWS
from plugins.node_resources_fit import NodeResourcesFit
from plugins.node_resources_fit.fits import NOTHING_IGNORED
from plugins.node_resources_fit.fits_batch import filter_rows
from plugins.node_resources_fit.requests import PodResourceRequest
from scheduler.backend.cache import SchedulerCache
from scheduler.framework import CycleState
from scheduler.framework import FilterBatch
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


class _Cluster:
    """Applies the generated node and pod operations to a cache."""

    def __init__(self, cache: SchedulerCache, *, pods: str, pod_memory: str) -> None:
        self._cache = cache
        self._pods = pods
        self._pod_memory = pod_memory
        self._pods_on: dict[str, list[str]] = {}

    def change(self, serial: int, kind: str, node: str, value: str) -> None:
        cache = self._cache
        if kind == "add-node":
            built = make_node(node).capacity(cpu=value, memory="8Gi", pods=self._pods).obj()
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
            pod = make_pod(f"p{serial}").node(node).req(cpu=value, memory=self._pod_memory).obj()
            cache.add_pod(pod)
            self._pods_on.setdefault(node, []).append(pod.key)
        elif kind == "remove-pod" and self._pods_on.get(node):
            existing = cache.get_pod(self._pods_on[node].pop())
            if existing is not None:
                cache.remove_pod(existing)


def _plugins(handle: FakeHandle) -> list[Scorer]:
    return [NodeResourcesFit(None, handle), NodeResourcesBalancedAllocation(None, handle)]


@settings(max_examples=150, deadline=None)
@given(st.lists(operation, min_size=1, max_size=40))
def test_memoized_scores_match_fresh_ones(operations: list[tuple[str, str, str]]) -> None:
    cache = SchedulerCache()
    handle = FakeHandle(cache.table)
    long_lived = _plugins(handle)
    cluster = _Cluster(cache, pods="20", pod_memory="100Mi")
    for serial, (kind, node, value) in enumerate(operations):
        cluster.change(serial, kind, node, value)
        if kind == "score" and cache.table.size:
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


def _verdicts(batch: FilterBatch) -> list[tuple[int, tuple[str, ...]]]:
    """Each row's code and reasons, however the batch packs them."""
    ids = batch.reason_ids
    return [
        (code, () if code == 0 else tuple(batch.reasons[0 if ids is None else int(ids[i])]))
        for i, code in enumerate(batch.codes.tolist())
    ]


fit_operation = st.one_of(
    st.tuples(st.just("add-node"), st.sampled_from(NODES), st.sampled_from(CPUS)),
    st.tuples(st.just("remove-node"), st.sampled_from(NODES), st.just("")),
    st.tuples(st.just("add-pod"), st.sampled_from(NODES), st.sampled_from(POD_CPUS)),
    st.tuples(st.just("remove-pod"), st.sampled_from(NODES), st.just("")),
    st.tuples(st.just("filter"), st.just(""), st.sampled_from([*POD_CPUS, "3", "8"])),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(fit_operation, min_size=1, max_size=40))
def test_remembered_fit_checks_match_fresh_ones(operations: list[tuple[str, str, str]]) -> None:
    cache = SchedulerCache()
    long_lived = NodeResourcesFit(None, FakeHandle(cache.table))
    # Room for two pods at most, so "Too many pods" comes up as well.
    cluster = _Cluster(cache, pods="2", pod_memory="300Mi")
    for serial, (kind, node, value) in enumerate(operations):
        cluster.change(serial, kind, node, value)
        if kind == "filter" and cache.table.size:
            pod = make_pod("incoming").req(cpu=value, memory="400Mi").obj()
            table = cache.table
            state = CycleState()
            long_lived.pre_filter(state, pod, table)
            request = PodResourceRequest.of_pod(pod)
            for rows in (table.all_rows(), table.all_rows()[::-2].copy()):
                expected = filter_rows(request, table, rows, NOTHING_IGNORED)
                remembered = long_lived.filter_nodes(state, pod, table, rows)
                assert _verdicts(remembered) == _verdicts(expected)


def test_rows_too_large_for_plain_integers_are_scored_as_the_row_forms_score_them() -> None:
    # 2**60 bytes of memory: int64 products could overflow in the row forms, so a refresh of
    # a few rows must not switch to plain integers there. Enough nodes that scoring all of
    # them takes the row forms.
    cache = SchedulerCache()
    handle = FakeHandle(cache.table)
    names = [f"big{i}" for i in range(FEW_REFRESHED_ROWS + 4)]
    for name in names:
        cache.add_node(make_node(name).capacity(cpu="4", memory=str(2**60), pods="20").obj())
    long_lived = _plugins(handle)
    pod = make_pod("incoming").req(cpu="1", memory="1Gi").obj()
    table = cache.table
    rows = table.all_rows()
    for plugin in long_lived:
        state = CycleState()
        plugin.pre_score(state, pod, table, rows)
        plugin.score_nodes(state, pod, table, rows)
    cache.add_pod(make_pod("placed").node(names[0]).req(cpu="1", memory=str(2**59)).obj())
    for remembered, new in zip(long_lived, _plugins(handle), strict=True):
        state = CycleState()
        remembered.pre_score(state, pod, table, rows)
        expected = new.score_nodes(state, pod, table, rows).tolist()
        got = remembered.score_nodes(state, pod, table, rows).tolist()
        print(got, expected)
        assert got == expected
