"""NodeDeclaredFeatures: a pod that needs a declared node feature only fits nodes declaring it."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.node_declared_features import REASON
from plugins.node_declared_features import SPEC
from plugins.node_declared_features import NodeDeclaredFeatures
from plugins.node_declared_features.plugin import is_schedulable_after_node_change
from plugins.node_declared_features.plugin import is_schedulable_after_pod_update
from plugins.node_declared_features.requirements import RESTART_ALL_CONTAINERS
from plugins.node_declared_features.requirements import USER_NAMESPACES_HOST_NETWORK
from plugins.node_declared_features.requirements import required_features
from scheduler.framework import ActionType
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework import Status
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_each_node

PLUGIN = NodeDeclaredFeatures(None, FakeHandle())
RESTART_RULE = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}


def _container(name: str, *rules: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": "app"}
    if rules:
        container["restartPolicy"] = "Never"
        container["restartPolicyRules"] = list(rules)
    return container


def restarting(name: str = "p", *, init: bool = False) -> Pod:
    rule_holder = _container("c", RESTART_RULE)
    if init:
        return make_pod(name).spec(containers=[_container("c")], initContainers=[rule_holder]).obj()
    return make_pod(name).spec(containers=[rule_holder]).obj()


def test_spec() -> None:
    assert SPEC.name == NodeDeclaredFeatures.name == "NodeDeclaredFeatures"
    assert SPEC.extension_points == ["PreFilter", "Filter"]


@pytest.mark.parametrize(
    ("spec", "needed"),
    [
        ({"containers": [_container("c")]}, ()),
        ({"containers": [_container("c", {**RESTART_RULE, "action": "Restart"})]}, ()),
        ({"containers": [_container("c", RESTART_RULE)]}, (RESTART_ALL_CONTAINERS,)),
        (
            {"containers": [_container("c")], "initContainers": [_container("i", RESTART_RULE)]},
            (RESTART_ALL_CONTAINERS,),
        ),
        (
            {"containers": [], "hostNetwork": True, "hostUsers": False},
            (USER_NAMESPACES_HOST_NETWORK,),
        ),
        ({"containers": [], "hostNetwork": True}, ()),
        ({"containers": [], "hostUsers": False}, ()),
        (
            {
                "containers": [_container("c", RESTART_RULE)],
                "hostNetwork": True,
                "hostUsers": False,
            },
            (RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK),
        ),
    ],
)
def test_requirements_are_inferred_from_the_spec(
    spec: dict[str, Any], needed: tuple[str, ...]
) -> None:
    assert required_features(spec) == needed


def test_a_pod_needing_nothing_skips_the_plugin() -> None:
    result, status = PLUGIN.pre_filter(CycleState(), make_pod("plain").obj(), build_table([]))
    assert result is None
    assert status.is_skip


@pytest.mark.parametrize("init", [False, True])
def test_only_nodes_declaring_the_feature_fit(init: bool) -> None:
    nodes = [
        make_node("declares").declared_features(RESTART_ALL_CONTAINERS, "SomethingElse").obj(),
        make_node("other").declared_features("SomethingElse").obj(),
        make_node("old").obj(),
    ]
    table = build_table(nodes)
    state = CycleState()
    pod = restarting(init=init)
    _, status = PLUGIN.pre_filter(state, pod, table)
    assert status.code is Code.SUCCESS
    assert filter_each_node(PLUGIN, state, pod, table) == [
        Status(),
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON),
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON),
    ]


def test_filter_without_its_pre_filter_state_is_an_error() -> None:
    table = build_table([make_node("n").obj()])
    [status] = filter_each_node(PLUGIN, CycleState(), restarting(), table)
    assert status.code is Code.ERROR
    assert "PreFilterNodeDeclaredFeatures" in status.message()


def test_events_are_node_adds_declared_feature_changes_and_pod_updates() -> None:
    registered = {(e.event.resource, e.event.action) for e in PLUGIN.events_to_register()}
    assert registered == {
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
        (EventResource.POD, ActionType.UPDATE),
    }


def test_node_hint_queues_new_nodes_and_changed_declarations() -> None:
    pod = restarting()
    old = make_node("n").declared_features("A").obj()
    same = make_node("n").declared_features("A").obj()
    more = make_node("n").declared_features("A", RESTART_ALL_CONTAINERS).obj()
    assert is_schedulable_after_node_change(pod, None, old) is QueueingHint.QUEUE
    assert is_schedulable_after_node_change(pod, old, same) is QueueingHint.QUEUE_SKIP
    assert is_schedulable_after_node_change(pod, old, more) is QueueingHint.QUEUE


def test_pod_hint_queues_only_the_pod_itself_when_its_needs_change() -> None:
    pod = make_pod("p").uid("p-1").spec(containers=[_container("c", RESTART_RULE)]).obj()
    relaxed = make_pod("p").uid("p-1").spec(containers=[_container("c")]).obj()
    relabelled = (
        make_pod("p")
        .uid("p-1")
        .label("team", "a")
        .spec(containers=[_container("c", RESTART_RULE)])
        .obj()
    )
    assert is_schedulable_after_pod_update(pod, pod, relaxed) is QueueingHint.QUEUE
    assert is_schedulable_after_pod_update(pod, pod, relabelled) is QueueingHint.QUEUE_SKIP
    other = make_pod("q").spec(containers=[_container("c")]).obj()
    assert is_schedulable_after_pod_update(pod, restarting("q"), other) is QueueingHint.QUEUE_SKIP
