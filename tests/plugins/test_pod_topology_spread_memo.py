"""The counts PodTopologySpread remembers between cycles stay right while the cluster changes:
after every change, a long-lived plugin decides exactly as a fresh one that counts from scratch."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.pod_topology_spread import PodTopologySpread
from scheduler.backend.cache.cache import SchedulerCache
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.testing import FakeHandle
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.plugins.cycle_kit import cycle_decisions
from tests.plugins.topology_spread_kit import incoming
from tests.plugins.topology_spread_kit import running
from tests.plugins.topology_spread_kit import spread

NODE_NAMES = [f"n{i}" for i in range(5)]
POD_NAMES = [f"p{i}" for i in range(8)]
PENDING = [
    incoming(spread(), spread(key=HOSTNAME_LABEL, action="ScheduleAnyway")),
    incoming(spread(key="rack", max_skew=2), spread(action="ScheduleAnyway"), name="other"),
]

changes = st.one_of(
    st.tuples(
        st.just("node"),
        st.sampled_from(NODE_NAMES),
        st.sampled_from(["a", "b", None]),
        st.sampled_from(["r1", "r2", None]),
    ),
    st.tuples(st.just("drop node"), st.sampled_from(NODE_NAMES)),
    st.tuples(
        st.just("pod"),
        st.sampled_from(POD_NAMES),
        st.sampled_from(NODE_NAMES),
        st.sampled_from(["web", "db"]),
        st.booleans(),
    ),
    st.tuples(st.just("drop pod"), st.sampled_from(POD_NAMES)),
    st.tuples(st.just("assume"), st.sampled_from(POD_NAMES), st.sampled_from(NODE_NAMES)),
)


def _apply(cache: SchedulerCache, change: tuple[object, ...]) -> None:
    kind = change[0]
    if kind == "node":
        _, name, zone, rack = change
        builder = make_node(str(name))
        if zone is not None:
            builder = builder.zone(str(zone))
        if rack is not None:
            builder = builder.label("rack", str(rack))
        cache.add_node(builder.obj())
    elif kind == "drop node":
        info = cache.node_info(str(change[1]))
        if info is not None and info.node is not None:
            cache.remove_node(info.node)
    elif kind == "pod":
        _, name, node, app, deleting = change
        cache.add_pod(running(str(name), str(node), {"app": str(app)}, deleting=bool(deleting)))
    elif kind == "drop pod":
        cached = cache.get_pod(f"default/{change[1]}")
        if cached is not None and not cache.is_assumed(cached.key):
            cache.remove_pod(cached)
    elif kind == "assume":
        key = f"default/{change[1]}"
        if cache.get_pod(key) is None:
            pod = make_pod(str(change[1])).labels(app="web").obj()
            cache.assume_pod(pod, str(change[2]))


def _decisions(
    plugin: PodTopologySpread, pod: Pod, cache: SchedulerCache
) -> tuple[list[str], Status, list[Status], list[int]]:
    return cycle_decisions(plugin, pod, cache.table)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cycles=st.lists(st.lists(changes, min_size=1, max_size=5), min_size=1, max_size=10))
def test_remembered_counts_match_a_fresh_count(cycles: list[list[tuple[object, ...]]]) -> None:
    cache = SchedulerCache()
    long_lived = PodTopologySpread(None, FakeHandle(cache.table))
    for between_cycles in cycles:
        for change in between_cycles:
            _apply(cache, change)
        for pod in PENDING:
            fresh = PodTopologySpread(None, FakeHandle(cache.table))
            assert _decisions(long_lived, pod, cache) == _decisions(fresh, pod, cache)


def test_the_same_selector_in_another_namespace_is_counted_apart() -> None:
    cache = SchedulerCache()
    for name, zone in (("n0", "a"), ("n1", "b")):
        cache.add_node(make_node(name).zone(zone).obj())
    cache.add_pod(running("x", "n0"))
    cache.add_pod(running("y", "n1", namespace="other"))
    plugin = PodTopologySpread(None, FakeHandle(cache.table))
    here = incoming(spread())
    there = dataclasses.replace(here, namespace="other")
    _, _, statuses_here, _ = _decisions(plugin, here, cache)
    _, _, statuses_there, _ = _decisions(plugin, there, cache)
    assert [s.is_success for s in statuses_here] == [False, True]
    assert [s.is_success for s in statuses_there] == [True, False]
