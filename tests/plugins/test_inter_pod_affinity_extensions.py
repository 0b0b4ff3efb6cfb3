"""InterPodAffinity AddPod/RemovePod: the PreFilter state follows hypothetical pod changes."""

from __future__ import annotations

from plugins.inter_pod_affinity import AFFINITY_RULES_NOT_MATCH
from plugins.inter_pod_affinity import ANTI_AFFINITY_RULES_NOT_MATCH
from plugins.inter_pod_affinity import EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
from plugins.inter_pod_affinity import InterPodAffinity
from plugins.inter_pod_affinity import InterPodAffinityArgs
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.objects.node import ZONE_LABEL
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node

HOST = "kubernetes.io/hostname"
PASS = ""
AFFINITY = AFFINITY_RULES_NOT_MATCH
ANTI = ANTI_AFFINITY_RULES_NOT_MATCH
EXISTING = EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH


def outcome(status: Status) -> str:
    return PASS if status.is_success else status.message()


def setup(pod: Pod, existing: list[Pod]) -> tuple[InterPodAffinity, CycleState, NodeTable]:
    """n1, n2 in zone a; n3 in zone b. PreFilter has run and did not skip."""
    nodes = [
        make_node("n1").zone("a").obj(),
        make_node("n2").zone("a").obj(),
        make_node("n3").zone("b").obj(),
    ]
    table = build_table(nodes, existing)
    plugin = InterPodAffinity(InterPodAffinityArgs(), FakeHandle(table))
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, table)
    assert status.is_success, status
    return plugin, state, table


def outcomes(plugin: InterPodAffinity, state: CycleState, pod: Pod, table: NodeTable) -> list[str]:
    each = [outcome(s) for s in filter_each_node(plugin, state, pod, table)]
    assert [outcome(s) for s in filter_batch_as_statuses(plugin, state, pod, table)] == each
    return each


def info(table: NodeTable, name: str) -> NodeInfo:
    row = table.row_of(name)
    assert row is not None
    return table.node_infos[row]


def test_adding_a_matching_pod_makes_anti_affinity_reject_its_node_and_removing_undoes_it() -> None:
    pod = make_pod("p").pod_affinity("required", HOST, {"app": "web"}, anti=True).obj()
    plugin, state, table = setup(pod, [])
    web = make_pod("w").label("app", "web").node("n2").obj()
    assert outcomes(plugin, state, pod, table) == [PASS, PASS, PASS]

    assert plugin.add_pod(state, pod, web, info(table, "n2")).is_success
    assert outcomes(plugin, state, pod, table) == [PASS, ANTI, PASS]

    assert plugin.remove_pod(state, pod, web, info(table, "n2")).is_success
    assert outcomes(plugin, state, pod, table) == [PASS, PASS, PASS]


def test_removing_a_running_pod_lifts_its_conflict() -> None:
    pod = make_pod("p").pod_affinity("required", ZONE_LABEL, {"app": "web"}, anti=True).obj()
    victim = make_pod("w").label("app", "web").node("n3").obj()
    plugin, state, table = setup(pod, [victim])
    assert outcomes(plugin, state, pod, table) == [PASS, PASS, ANTI]
    plugin.remove_pod(state, pod, victim, info(table, "n3"))
    assert outcomes(plugin, state, pod, table) == [PASS, PASS, PASS]


def test_adding_a_pod_that_matches_affinity_opens_its_zone_and_ends_the_first_pod_exemption() -> (
    None
):
    pod = make_pod("p").label("app", "db").pod_affinity("required", ZONE_LABEL, {"app": "db"}).obj()
    plugin, state, table = setup(pod, [])
    assert outcomes(plugin, state, pod, table) == [PASS, PASS, PASS]  # first of its group

    plugin.add_pod(state, pod, make_pod("d").label("app", "db").node("n3").obj(), info(table, "n3"))
    assert outcomes(plugin, state, pod, table) == [AFFINITY, AFFINITY, PASS]


def test_adding_a_pod_whose_anti_affinity_matches_the_incoming_pod_repels_it() -> None:
    pod = (
        make_pod("p")
        .label("app", "web")
        .pod_affinity("required", HOST, {"app": "x"}, anti=True)
        .obj()
    )
    plugin, state, table = setup(pod, [])
    repeller = (
        make_pod("r")
        .pod_affinity("required", ZONE_LABEL, {"app": "web"}, anti=True)
        .node("n1")
        .obj()
    )
    plugin.add_pod(state, pod, repeller, info(table, "n1"))
    assert outcomes(plugin, state, pod, table) == [EXISTING, EXISTING, PASS]
    plugin.remove_pod(state, pod, repeller, info(table, "n1"))
    assert outcomes(plugin, state, pod, table) == [PASS, PASS, PASS]


def test_a_cloned_state_changes_independently() -> None:
    pod = make_pod("p").pod_affinity("required", HOST, {"app": "web"}, anti=True).obj()
    plugin, state, table = setup(pod, [])
    copy = state.clone()
    plugin.add_pod(copy, pod, make_pod("w").label("app", "web").node("n1").obj(), info(table, "n1"))
    assert outcomes(plugin, copy, pod, table) == [ANTI, PASS, PASS]
    assert outcomes(plugin, state, pod, table) == [PASS, PASS, PASS]


def test_a_node_outside_the_table_is_placed_in_its_own_domain() -> None:
    pod = make_pod("p").pod_affinity("required", ZONE_LABEL, {"app": "web"}, anti=True).obj()
    plugin, state, table = setup(pod, [])
    outside = NodeInfo(make_node("n9").zone("c").obj())
    plugin.add_pod(state, pod, make_pod("w").label("app", "web").node("n9").obj(), outside)
    assert outcome(plugin.filter(state, pod, outside)) == ANTI
    assert outcomes(plugin, state, pod, table) == [PASS, PASS, PASS]


def test_add_pod_without_pre_filter_state_is_an_error() -> None:
    table = build_table([make_node("n1").obj()])
    plugin = InterPodAffinity(InterPodAffinityArgs(), FakeHandle(table))
    pod = make_pod("p").obj()
    status = plugin.add_pod(CycleState(), pod, make_pod("q").obj(), table.node_infos[0])
    assert status.code is Code.ERROR


def test_pre_filter_extensions_are_the_plugin_itself() -> None:
    plugin = InterPodAffinity(None, FakeHandle())
    assert plugin.pre_filter_extensions() is plugin
    assert plugin.args == InterPodAffinityArgs()
