"""PodTopologySpread's PreFilter extensions (AddPod/RemovePod), its critical paths, and the
counts it remembers between cycles."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from plugins.pod_topology_spread import PodTopologySpread
from plugins.pod_topology_spread.critical_paths import EMPTY_COUNT
from plugins.pod_topology_spread.critical_paths import CriticalPaths
from scheduler.framework import CycleState
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.runtime.node_filter import FilterChain
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from tests.plugins.topology_spread_kit import brief
from tests.plugins.topology_spread_kit import incoming
from tests.plugins.topology_spread_kit import plugin_for
from tests.plugins.topology_spread_kit import running
from tests.plugins.topology_spread_kit import spread
from tests.plugins.topology_spread_kit import zoned

NODES = [zoned("a1", "a"), zoned("b1", "b"), zoned("c1", "c")]


def _briefs(plugin: PodTopologySpread, state: CycleState, pod: Pod, table: NodeTable) -> list[str]:
    return [brief(plugin.filter(state, pod, info)) for info in table.node_infos]


def _prepared(pods: list[Pod], pod: Pod) -> tuple[PodTopologySpread, CycleState, NodeTable]:
    table = build_table(NODES, pods)
    plugin = plugin_for(table)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, table)
    assert status.is_success
    return plugin, state, table


def test_add_pod_fills_the_emptiest_zone() -> None:
    pod = incoming(spread())
    plugin, state, table = _prepared([running("x", "a1"), running("y", "b1")], pod)
    assert _briefs(plugin, state, pod, table) == ["skew", "skew", "pass"]
    extensions = plugin.pre_filter_extensions()
    status = extensions.add_pod(state, pod, running("z", "c1"), table.node_infos[2])
    assert status.is_success
    assert _briefs(plugin, state, pod, table) == ["pass", "pass", "pass"]


def test_add_pod_counts_a_pod_on_a_node_tolerated_by_gt_with_the_gate() -> None:
    """nodeTaintsPolicy Honor: the dry run's pod on c1 (sla=50, tolerated by Gt 40 only with
    TaintTolerationComparisonOperators) counts, as PreFilter counted zone c."""
    gt_40 = {"key": "sla", "operator": "Gt", "value": "40", "effect": "NoSchedule"}
    pod = incoming(spread(nodeTaintsPolicy="Honor"), tolerations=[gt_40])
    nodes = [*NODES[:2], make_node("c1").zone("c").taint("sla", "50").obj()]
    table = build_table(nodes, [running("x", "a1"), running("y", "b1")])
    plugin = plugin_for(table, gates={"TaintTolerationComparisonOperators": True})
    state = CycleState()
    assert plugin.pre_filter(state, pod, table)[1].is_success
    assert _briefs(plugin, state, pod, table) == ["skew", "skew", "pass"]
    cloned = state.clone()
    extensions = plugin.pre_filter_extensions()
    assert extensions.add_pod(cloned, pod, running("z", "c1"), table.node_infos[2]).is_success
    assert _briefs(plugin, cloned, pod, table) == ["pass", "pass", "pass"]


def test_remove_pod_lowers_the_minimum_again() -> None:
    pod = incoming(spread())
    plugin, state, table = _prepared(
        [running("x", "a1"), running("y", "b1"), running("z", "c1")], pod
    )
    assert _briefs(plugin, state, pod, table) == ["pass", "pass", "pass"]
    extensions = plugin.pre_filter_extensions()
    assert extensions.remove_pod(state, pod, running("z", "c1"), table.node_infos[2]).is_success
    assert _briefs(plugin, state, pod, table) == ["skew", "skew", "pass"]


@pytest.mark.parametrize(
    "other",
    [
        running("other-ns", "c1", namespace="elsewhere"),
        running("db", "c1", {"app": "db"}),
    ],
    ids=["other namespace", "not selected"],
)
def test_add_pod_ignores_pods_the_constraint_does_not_count(other: Pod) -> None:
    pod = incoming(spread())
    plugin, state, table = _prepared([running("x", "a1"), running("y", "b1")], pod)
    plugin.pre_filter_extensions().add_pod(state, pod, other, table.node_infos[2])
    assert _briefs(plugin, state, pod, table) == ["skew", "skew", "pass"]


def test_add_pod_respects_inclusion_policies() -> None:
    # c1 is outside the pod's node affinity: with Honor, a pod added there does not count.
    nodes = [zoned("a1", "a", pool="p"), zoned("b1", "b", pool="p"), zoned("c1", "c")]
    pod = incoming(spread(), nodeSelector={"pool": "p"})
    table = build_table(nodes, [running("x", "a1")])
    plugin = plugin_for(table)
    state = CycleState()
    plugin.pre_filter(state, pod, table)
    assert _briefs(plugin, state, pod, table) == ["skew", "pass", "pass"]
    plugin.pre_filter_extensions().add_pod(state, pod, running("z", "c1"), table.node_infos[2])
    assert _briefs(plugin, state, pod, table) == ["skew", "pass", "pass"]
    plugin.pre_filter_extensions().add_pod(state, pod, running("w", "b1"), table.node_infos[1])
    assert _briefs(plugin, state, pod, table) == ["pass", "pass", "pass"]


def test_cloned_state_is_independent() -> None:
    pod = incoming(spread())
    plugin, state, table = _prepared([running("x", "a1"), running("y", "b1")], pod)
    copy = state.clone()
    plugin.pre_filter_extensions().add_pod(copy, pod, running("z", "c1"), table.node_infos[2])
    assert _briefs(plugin, copy, pod, table) == ["pass", "pass", "pass"]
    assert _briefs(plugin, state, pod, table) == ["skew", "skew", "pass"]


def test_extensions_without_state_are_errors() -> None:
    table = build_table(NODES)
    plugin = plugin_for(table)
    status = plugin.pre_filter_extensions().add_pod(
        CycleState(), incoming(spread()), running("z", "c1"), table.node_infos[2]
    )
    assert not status.is_success
    assert status.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


def test_nominated_pods_are_counted_through_the_filter_chain() -> None:
    pod = incoming(spread())
    table = build_table(NODES, [running("x", "b1"), running("y", "c1")])
    plugin = PodTopologySpread(None, FakeHandle(table))
    chain = FilterChain((plugin,), (plugin,))
    state = CycleState()
    plugin.pre_filter(state, pod, table)
    a1 = table.node_infos[0]
    assert plugin.filter(state, pod, a1) == Status()
    # Two pods nominated to a1 make zone a hold 2 against a minimum of 1.
    nominated = [
        dataclasses.replace(running(f"n{i}", "a1"), node_name="", priority=pod.priority)
        for i in range(2)
    ]
    status = chain.run_with_nominated(state, pod, a1, nominated)
    assert brief(status) == "skew"
    assert plugin.filter(state, pod, a1) == Status()  # the cycle's own state is untouched


# ---- critical paths -----------------------------------------------------------------------


def test_critical_paths_from_counts_keep_the_first_two_least() -> None:
    paths = CriticalPaths.of(np.array([0, 1, 2, 3]), np.array([3, 1, 2, 1]))
    assert (paths.domains, paths.counts) == ([1, 3], [1, 1])
    single = CriticalPaths.of(np.array([5]), np.array([4]))
    assert (single.domains, single.counts) == ([5, -1], [4, EMPTY_COUNT])


def test_critical_paths_updates_follow_upstream_bookkeeping() -> None:
    # Domains 0, 1, 2 hold 1 pod each: the paths track domains 0 and 1.
    paths = CriticalPaths.of(np.array([0, 1, 2]), np.array([1, 1, 1]))
    paths.update(0, 2)  # domain 0 grows: domain 1 becomes first
    assert (paths.domains, paths.counts) == ([1, 0], [1, 2])
    paths.update(1, 2)  # domain 1 grows too; domain 2 (still 1) is not tracked
    assert paths.minimum == 2  # upstream's approximation, not the exact minimum (1)
    paths.update(2, 0)  # a domain that drops below the minimum takes the first path
    assert (paths.domains, paths.counts) == ([2, 1], [0, 2])


# ---- counts remembered between cycles ----------------------------------------------------


def _fresh_briefs(table: NodeTable, pod: Pod) -> list[str]:
    plugin = plugin_for(table)
    state = CycleState()
    plugin.pre_filter(state, pod, table)
    return _briefs(plugin, state, pod, table)


def _place(table: NodeTable, row: int, pod: Pod) -> None:
    info = table.node_infos[row]
    info.add_pod(dataclasses.replace(pod, node_name=table.names[row]))
    table.refresh_usage(info)


def test_remembered_counts_follow_pods_and_nodes_coming_and_going() -> None:
    pod = incoming(spread())
    table = build_table(NODES)
    plugin = plugin_for(table)

    def briefs() -> list[str]:
        state = CycleState()
        plugin.pre_filter(state, pod, table)
        result = _briefs(plugin, state, pod, table)
        assert result == _fresh_briefs(table, pod)  # same as counting from scratch
        return result

    assert briefs() == ["pass", "pass", "pass"]
    _place(table, 0, running("p1", "a1"))
    assert briefs() == ["skew", "pass", "pass"]
    _place(table, 1, running("p2", "b1"))
    _place(table, 2, running("p3", "c1"))
    assert briefs() == ["pass", "pass", "pass"]
    # A pod is relabelled out of the selector (replaced under the same key).
    info = table.node_infos[2]
    info.add_pod(running("p3", "c1", {"app": "other"}))
    table.refresh_usage(info)
    assert briefs() == ["skew", "skew", "pass"]
    # A node with pods disappears: rows move, and its zone's pods are gone.
    table.remove_node("a1")
    assert table.names == ["c1", "b1"]
    assert briefs() == ["pass", "skew"]
    # A new node joins an existing zone.
    new = NodeInfo(zoned("b2", "b"))
    table.upsert_node(new)
    assert briefs() == ["pass", "skew", "skew"]
