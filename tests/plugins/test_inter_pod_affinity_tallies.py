"""The per-row tallies InterPodAffinity keeps between cycles stay right while the cluster changes:
after every change they equal a recount from scratch, and a long-lived plugin decides exactly
as a fresh one."""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Any

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.inter_pod_affinity import InterPodAffinity
from plugins.inter_pod_affinity.pod_tallies import ExistingTermIndex
from plugins.inter_pod_affinity.pod_tallies import IncomingTermTallies
from plugins.inter_pod_affinity.pod_tallies import Role
from plugins.inter_pod_affinity.pod_tallies import term_key
from plugins.inter_pod_affinity.terms import compile_resolved_term
from scheduler.backend.cache.cache import SchedulerCache
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.pod_affinity import AffinityTerm
from scheduler.testing import FakeHandle
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.plugins.cycle_kit import cycle_decisions

NODE_NAMES = [f"n{i}" for i in range(5)]
POD_NAMES = [f"p{i}" for i in range(8)]
NAMESPACES = [
    {"metadata": {"name": "default", "labels": {"team": "x"}}},
    {"metadata": {"name": "ns1", "labels": {"team": "x"}}},
    {"metadata": {"name": "ns2", "labels": {"team": "y"}}},
]
# What an existing pod may carry: (kind, anti, weight, topology key, namespace selector).
CARRIED: list[tuple[str, bool, int, str, dict[str, Any] | None]] = [
    ("required", True, 0, HOSTNAME_LABEL, None),
    ("required", False, 0, ZONE_LABEL, None),
    ("preferred", False, 5, ZONE_LABEL, {"matchLabels": {"team": "x"}}),
    ("preferred", True, 3, HOSTNAME_LABEL, {}),
    ("required", True, 0, ZONE_LABEL, {"matchLabels": {"team": "y"}}),
]


def _existing(name: str, node: str, namespace: str, app: str, carried: list[int]) -> Pod:
    builder = make_pod(name).namespace(namespace).labels(app=app).node(node)
    for choice in carried:
        kind, anti, weight, key, namespace_selector = CARRIED[choice]
        builder = builder.pod_affinity(
            kind,
            key,
            {"app": "web"},
            anti=anti,
            weight=weight,
            namespace_selector=namespace_selector,
        )
    return builder.obj()


changes = st.one_of(
    st.tuples(st.just("node"), st.sampled_from(NODE_NAMES), st.sampled_from(["a", "b", None])),
    st.tuples(st.just("drop node"), st.sampled_from(NODE_NAMES)),
    st.tuples(
        st.just("pod"),
        st.sampled_from(POD_NAMES),
        st.sampled_from(NODE_NAMES),
        st.sampled_from(["default", "ns1", "ns2"]),
        st.sampled_from(["web", "db"]),
        st.lists(st.integers(0, len(CARRIED) - 1), max_size=3),
    ),
    st.tuples(st.just("drop pod"), st.sampled_from(POD_NAMES)),
    st.tuples(st.just("assume"), st.sampled_from(POD_NAMES), st.sampled_from(NODE_NAMES)),
)


def _apply(cache: SchedulerCache, change: tuple[Any, ...]) -> None:
    kind = change[0]
    if kind == "node":
        _, name, zone = change
        builder = make_node(name)
        if zone is not None:
            builder = builder.zone(zone)
        cache.add_node(builder.obj())
    elif kind == "drop node":
        info = cache.node_info(change[1])
        if info is not None and info.node is not None:
            cache.remove_node(info.node)
    elif kind == "pod":
        _, name, node, namespace, app, carried = change
        for cached in _cached_named(cache, name):
            if not cache.is_assumed(cached.key):
                cache.remove_pod(cached)
        if not _cached_named(cache, name):
            cache.add_pod(_existing(name, node, namespace, app, carried))
    elif kind == "drop pod":
        for cached in _cached_named(cache, change[1]):
            if not cache.is_assumed(cached.key):
                cache.remove_pod(cached)
    elif kind == "assume" and not _cached_named(cache, change[1]):
        # Assumed pods count as soon as they are assumed, terms and all.
        assumed = (
            make_pod(change[1])
            .labels(app="web")
            .pod_affinity("required", HOSTNAME_LABEL, {"app": "web"}, anti=True)
            .obj()
        )
        cache.assume_pod(assumed, change[2])


def _cached_named(cache: SchedulerCache, name: str) -> list[Pod]:
    found = (cache.get_pod(f"{ns}/{name}") for ns in ("default", "ns1", "ns2"))
    return [pod for pod in found if pod is not None]


def _pods_by_row(table: NodeTable) -> list[list[Pod]]:
    return [list(info.pods.values()) for info in table.node_infos]


def _recounted_terms(table: NodeTable, role: Role) -> dict[tuple[Any, ...], list[int]]:
    """Per (weight, term), how often each row's pods carry it: counted from scratch."""
    found: dict[tuple[Any, ...], list[int]] = {}
    for row, pods in enumerate(_pods_by_row(table)):
        for pod in pods:
            carried: list[tuple[int, AffinityTerm]] = []
            affinity, anti = pod.pod_affinity, pod.pod_anti_affinity
            if role is Role.REQUIRED_AFFINITY and affinity is not None:
                carried = [(0, t) for t in affinity.required]
            elif role is Role.PREFERRED_AFFINITY and affinity is not None:
                carried = [(w.weight, w.term) for w in affinity.preferred]
            elif role is Role.REQUIRED_ANTI_AFFINITY and anti is not None:
                carried = [(0, t) for t in anti.required]
            elif role is Role.PREFERRED_ANTI_AFFINITY and anti is not None:
                carried = [(w.weight, w.term) for w in anti.preferred]
            for weight, term in carried:
                counts = found.setdefault((weight, term_key(term)), [0] * table.size)
                counts[row] += 1
    return found


def _indexed_terms(
    index: ExistingTermIndex, table: NodeTable, role: Role
) -> dict[tuple[Any, ...], list[int]]:
    return {
        (entry.weight, term_key(entry.term)): entry.counts.tolist()
        for entry in index.terms(table, role)
    }


INCOMING_TERMS = [
    AffinityTerm(None, frozenset({"default"}), None, HOSTNAME_LABEL),
    make_pod("t1")
    .pod_affinity("required", ZONE_LABEL, {"app": "web"})
    .obj()
    .pod_affinity.required[0],  # type: ignore[union-attr]
    make_pod("t2")
    .pod_affinity("required", HOSTNAME_LABEL, {"app": "db"}, namespaces=["ns1", "ns2"])
    .obj()
    .pod_affinity.required[0],  # type: ignore[union-attr]
]


def _recounted_matches(table: NodeTable, term: AffinityTerm) -> list[int]:
    return [
        sum(1 for pod in pods if term.matches_pod(pod.namespace, pod.labels, None))
        for pods in _pods_by_row(table)
    ]


PENDING = [
    make_pod("in0")
    .labels(app="web")
    .pod_affinity("required", HOSTNAME_LABEL, {"app": "web"}, anti=True)
    .obj(),
    make_pod("in1")
    .namespace("ns2")
    .labels(app="db")
    .pod_affinity("required", ZONE_LABEL, {"app": "web"}, namespace_selector={})
    .pod_affinity("preferred", HOSTNAME_LABEL, {"app": "db"}, anti=True, weight=7)
    .obj(),
    make_pod("in2")
    .labels(app="web")
    .pod_affinity(
        "preferred",
        ZONE_LABEL,
        {"app": "web"},
        weight=4,
        namespace_selector={"matchLabels": {"team": "x"}},
    )
    .obj(),
]


def _decisions(
    plugin: InterPodAffinity, pod: Pod, cache: SchedulerCache
) -> tuple[list[str], Status, list[Status], list[int]]:
    return cycle_decisions(plugin, pod, cache.table)


def _plugin(cache: SchedulerCache) -> InterPodAffinity:
    return InterPodAffinity(None, FakeHandle(cache.table, listers={"namespaces": NAMESPACES}))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cycles=st.lists(st.lists(changes, min_size=1, max_size=5), min_size=1, max_size=10))
def test_tallies_equal_a_recount_from_scratch(cycles: list[list[tuple[Any, ...]]]) -> None:
    cache = SchedulerCache()
    index = ExistingTermIndex()
    tallies = IncomingTermTallies()
    for between_cycles in cycles:
        for change in between_cycles:
            _apply(cache, change)
        table = cache.table
        for role in Role:
            assert _indexed_terms(index, table, role) == _recounted_terms(table, role)
        for term in INCOMING_TERMS:
            counts = tallies.per_row(
                table, ("one", term_key(term)), partial(compile_resolved_term, term)
            )
            assert counts.tolist() == _recounted_matches(table, term)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cycles=st.lists(st.lists(changes, min_size=1, max_size=5), min_size=1, max_size=8))
def test_a_long_lived_plugin_decides_as_a_fresh_one(cycles: list[list[tuple[Any, ...]]]) -> None:
    cache = SchedulerCache()
    long_lived = _plugin(cache)
    for between_cycles in cycles:
        for change in between_cycles:
            _apply(cache, change)
        for pod in PENDING:
            assert _decisions(long_lived, pod, cache) == _decisions(_plugin(cache), pod, cache)


def test_adding_moving_and_removing_pods_updates_the_row_counts() -> None:
    cache = SchedulerCache()
    for name, zone in (("n0", "a"), ("n1", "a"), ("n2", "b")):
        cache.add_node(make_node(name).zone(zone).obj())
    index = ExistingTermIndex()
    tallies = IncomingTermTallies()
    web = INCOMING_TERMS[1]

    def anti_counts() -> list[list[int]]:
        return [e.counts.tolist() for e in index.terms(cache.table, Role.REQUIRED_ANTI_AFFINITY)]

    def web_counts() -> list[int]:
        counts = tallies.per_row(
            cache.table, ("one", term_key(web)), partial(compile_resolved_term, web)
        )
        return [int(count) for count in counts]

    assert anti_counts() == [] and web_counts() == [0, 0, 0]
    first = _existing("a", "n0", "default", "web", [0])
    cache.add_pod(first)
    cache.add_pod(_existing("b", "n0", "default", "web", [0, 0]))
    assert anti_counts() == [[3, 0, 0]] and web_counts() == [2, 0, 0]
    # Bound elsewhere than first reported: the pod moves with its term.
    cache.update_pod(first, _existing("a", "n2", "default", "web", [0]))
    assert anti_counts() == [[2, 0, 1]] and web_counts() == [1, 0, 1]
    # Labels change in place: it no longer matches, it still carries its term.
    cache.update_pod(first, _existing("a", "n2", "default", "db", [0]))
    assert anti_counts() == [[2, 0, 1]] and web_counts() == [1, 0, 0]
    cache.remove_pod(_existing("b", "n0", "default", "web", []))
    assert anti_counts() == [[0, 0, 1]] and web_counts() == [0, 0, 0]
    cache.remove_pod(_existing("a", "n2", "default", "db", []))
    assert anti_counts() == []


def test_node_label_changes_move_counts_between_domains_without_recounting_pods() -> None:
    cache = SchedulerCache()
    for name, zone in (("n0", "a"), ("n1", "b")):
        cache.add_node(make_node(name).zone(zone).obj())
    cache.add_pod(_existing("a", "n0", "default", "web", [4]))
    plugin = _plugin(cache)
    # The pod lives in ns2 (team y): the existing pod's zone anti-affinity selects it.
    repelled = make_pod("in").namespace("ns2").labels(app="web").obj()
    _, status, statuses, _ = _decisions(plugin, repelled, cache)
    assert status.is_success
    assert [s.is_success for s in statuses] == [False, True]
    cache.update_node(None, make_node("n1").zone("a").obj())
    _, _, statuses, _ = _decisions(plugin, repelled, cache)
    assert [s.is_success for s in statuses] == [False, False]
    cache.update_node(None, make_node("n0").zone("c").obj())
    _, _, statuses, _ = _decisions(plugin, repelled, cache)
    assert [s.is_success for s in statuses] == [False, True]


def test_a_namespace_selector_decides_by_the_incoming_pods_namespace() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n0").zone("a").obj())
    cache.add_pod(_existing("a", "n0", "default", "web", [4]))  # repels team y only
    plugin = _plugin(cache)
    for namespace, repelled in (("ns2", True), ("ns1", False), ("default", False)):
        pod = make_pod("in").namespace(namespace).labels(app="web").obj()
        _, status, statuses, _ = _decisions(plugin, pod, cache)
        verdicts = [s.is_success for s in statuses] if status.is_success else [True]
        assert verdicts == [not repelled], namespace


def test_terms_are_counted_by_value_not_by_object() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n0").obj())
    for name in ("a", "b", "c"):
        cache.add_pod(_existing(name, "n0", "default", "web", [0]))
    index = ExistingTermIndex()
    entries = list(index.terms(cache.table, Role.REQUIRED_ANTI_AFFINITY))
    assert len(entries) == 1 and entries[0].counts.tolist() == [3]
    assert Counter(e.total for e in entries) == Counter({3: 1})
