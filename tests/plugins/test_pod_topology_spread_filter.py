"""PodTopologySpread Filter: the documented rules, case by case, in both forms."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest

from plugins.pod_topology_spread import CONSTRAINTS_NOT_MATCH
from plugins.pod_topology_spread import NODE_LABEL_NOT_MATCH
from plugins.pod_topology_spread import PodTopologySpreadArgs
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.testing import build_table
from scheduler.testing import make_node
from tests.plugins.topology_spread_kit import brief
from tests.plugins.topology_spread_kit import filter_outcomes
from tests.plugins.topology_spread_kit import incoming
from tests.plugins.topology_spread_kit import plugin_for
from tests.plugins.topology_spread_kit import running
from tests.plugins.topology_spread_kit import spread
from tests.plugins.topology_spread_kit import zoned


def make_tainted(name: str, zone: str) -> Node:
    return make_node(name).zone(zone).taint("dedicated", "x").obj()


def _zones(*names_and_zones: tuple[str, str | None]) -> list[Node]:
    return [zoned(name, zone) for name, zone in names_and_zones]


THREE_ZONES = _zones(("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c"))


@dataclass
class Case:
    id: str
    pod: Pod
    expected: dict[str, str]
    nodes: list[Node] = field(default_factory=lambda: THREE_ZONES)
    pods: list[Pod] = field(default_factory=list)


def _web(count: int, node: str, prefix: str = "", **labels: str) -> list[Pod]:
    return [running(f"{prefix}{node}-{i}", node, {"app": "web", **labels}) for i in range(count)]


CASES = [
    Case(
        "the emptiest zones take the pod",
        incoming(spread()),
        {"a1": "skew", "a2": "skew", "b1": "skew", "c1": "pass"},
        pods=[*_web(1, "a1"), *_web(1, "a2"), *_web(1, "b1")],
    ),
    Case(
        "a domain at the global minimum plus maxSkew minus one still fits",
        incoming(spread(max_skew=2)),
        {"a1": "skew", "a2": "skew", "b1": "pass", "c1": "pass"},
        pods=[*_web(2, "a1"), *_web(1, "b1")],
    ),
    Case(
        "a pod its own selector does not match adds nothing to the skew",
        incoming(spread(), labels={"app": "db"}),
        {"a1": "pass", "a2": "pass", "b1": "pass", "c1": "pass"},
        pods=[*_web(1, "a1")],
    ),
    Case(
        "pods of other namespaces, other apps and terminating pods are not counted",
        incoming(spread()),
        {"a1": "pass", "a2": "pass", "b1": "pass", "c1": "pass"},
        pods=[
            running("other-ns", "a1", namespace="other"),
            running("db", "a1", {"app": "db"}),
            running("leaving", "b1", deleting=True),
        ],
    ),
    Case(
        "a node without the topology key is unresolvable",
        incoming(spread()),
        {"a1": "pass", "b1": "pass", "bare": "label"},
        nodes=_zones(("a1", "a"), ("b1", "b"), ("bare", None)),
    ),
    Case(
        "minDomains above the eligible domains makes the global minimum 0",
        incoming(spread(minDomains=4)),
        {"a1": "skew", "a2": "skew", "b1": "skew", "c1": "skew"},
        pods=[*_web(1, "a1"), *_web(1, "b1"), *_web(1, "c1")],
    ),
    Case(
        "minDomains met: the real minimum counts",
        incoming(spread(minDomains=3)),
        {"a1": "pass", "a2": "pass", "b1": "pass", "c1": "pass"},
        pods=[*_web(1, "a1"), *_web(1, "b1"), *_web(1, "c1")],
    ),
    Case(
        "nodeAffinityPolicy Honor: zones outside the pod's node affinity are no domains",
        incoming(spread(), nodeSelector={"pool": "main"}),
        {"a1": "skew", "b1": "pass", "c1": "pass"},
        nodes=[zoned("a1", "a", pool="main"), zoned("b1", "b", pool="main"), zoned("c1", "c")],
        pods=[*_web(2, "a1"), *_web(1, "b1")],
    ),
    Case(
        "nodeAffinityPolicy Ignore: every zone is a domain",
        incoming(spread(nodeAffinityPolicy="Ignore"), nodeSelector={"pool": "main"}),
        {"a1": "skew", "b1": "skew", "c1": "pass"},
        nodes=[zoned("a1", "a", pool="main"), zoned("b1", "b", pool="main"), zoned("c1", "c")],
        pods=[*_web(2, "a1"), *_web(1, "b1")],
    ),
    Case(
        "nodeTaintsPolicy Ignore (default): a tainted empty zone holds the minimum at 0",
        incoming(spread()),
        {"a1": "skew", "b1": "skew", "tainted": "pass"},
        nodes=[
            zoned("a1", "a"),
            zoned("b1", "b"),
            make_tainted("tainted", "c"),
        ],
        pods=[*_web(1, "a1"), *_web(1, "b1")],
    ),
    Case(
        "nodeTaintsPolicy Honor: an untolerated taint takes the zone out",
        incoming(spread(nodeTaintsPolicy="Honor")),
        {"a1": "pass", "b1": "pass", "tainted": "pass"},
        nodes=[zoned("a1", "a"), zoned("b1", "b"), make_tainted("tainted", "c")],
        pods=[*_web(1, "a1"), *_web(1, "b1")],
    ),
    Case(
        "nodeTaintsPolicy Honor with a toleration keeps the zone",
        incoming(
            spread(nodeTaintsPolicy="Honor"),
            tolerations=[{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
        ),
        {"a1": "skew", "b1": "skew", "tainted": "pass"},
        nodes=[zoned("a1", "a"), zoned("b1", "b"), make_tainted("tainted", "c")],
        pods=[*_web(1, "a1"), *_web(1, "b1")],
    ),
    Case(
        "matchLabelKeys counts only pods sharing the pod's value",
        incoming(spread(matchLabelKeys=["version"]), labels={"app": "web", "version": "v2"}),
        {"a1": "pass", "a2": "pass", "b1": "skew", "c1": "pass"},
        pods=[*_web(3, "a1", version="v1"), *_web(1, "b1", version="v2")],
    ),
    Case(
        "matchLabelKeys naming a label the pod lacks is ignored",
        incoming(spread(matchLabelKeys=["version"])),
        {"a1": "skew", "a2": "skew", "b1": "pass", "c1": "pass"},
        pods=[*_web(1, "a1", version="v1"), *_web(1, "a2", version="v2")],
    ),
    Case(
        "an empty selector counts no existing pod",
        incoming(spread(selector={})),
        {"a1": "pass", "a2": "pass", "b1": "pass", "c1": "pass"},
        pods=[*_web(5, "a1")],
    ),
    Case(
        "no selector: nothing is counted, the pod itself included",
        incoming(spread(selector=None, max_skew=1)),
        {"a1": "pass", "a2": "pass", "b1": "pass", "c1": "pass"},
        pods=[*_web(5, "a1")],
    ),
    Case(
        "hostname spreading",
        incoming(spread(key=HOSTNAME_LABEL)),
        {"a1": "skew", "a2": "pass", "b1": "pass", "c1": "pass"},
        pods=[*_web(1, "a1")],
    ),
    Case(
        "nodes lacking any constraint's key are no domain for the others; order decides",
        incoming(spread(), spread(key="rack")),
        {"a1": "pass", "b1": "label", "c1": "skew"},
        nodes=[zoned("a1", "a", rack="r1"), zoned("b1", "b"), zoned("c1", "c", rack="r2")],
        pods=[*_web(1, "a1"), *_web(1, "b1"), *_web(2, "c1")],
    ),
    Case(
        "soft constraints never filter",
        incoming(spread(action="ScheduleAnyway")),
        {"a1": "pass", "a2": "pass", "b1": "pass", "c1": "pass"},
        pods=[*_web(4, "a1")],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_filter(case: Case) -> None:
    outcomes = filter_outcomes(case.nodes, case.pods, case.pod)
    assert {name: brief(status) for name, status in outcomes.items()} == case.expected


@pytest.mark.parametrize(("gate", "others"), [(True, "skew"), (False, "pass")])
def test_nodes_taints_policy_honors_a_gt_toleration_with_the_gate(gate: bool, others: str) -> None:
    """With TaintTolerationComparisonOperators the pod tolerates sla=50 (Gt 40), so zone c
    counts, empty, and holds the minimum at 0; without it zone c is no domain."""
    pod = incoming(
        spread(nodeTaintsPolicy="Honor"),
        tolerations=[{"key": "sla", "operator": "Gt", "value": "40", "effect": "NoSchedule"}],
    )
    nodes = [zoned("a1", "a"), zoned("b1", "b"), make_node("c1").zone("c").taint("sla", "50").obj()]
    gates = {"TaintTolerationComparisonOperators": gate}
    outcomes = filter_outcomes(nodes, [*_web(1, "a1"), *_web(1, "b1")], pod, gates=gates)
    assert {name: brief(status) for name, status in outcomes.items()} == {
        "a1": others,
        "b1": others,
        "c1": "pass",
    }


def test_reason_texts_and_codes() -> None:
    outcomes = filter_outcomes(
        _zones(("a1", "a"), ("b1", "b"), ("bare", None)),
        _web(2, "a1"),
        incoming(spread()),
    )
    assert outcomes["a1"].code is Code.UNSCHEDULABLE
    assert outcomes["a1"].reasons == ("node(s) didn't match pod topology spread constraints",)
    assert outcomes["bare"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert outcomes["bare"].reasons == (
        "node(s) didn't match pod topology spread constraints (missing required label)",
    )
    assert outcomes["a1"].reasons == (CONSTRAINTS_NOT_MATCH,)
    assert outcomes["bare"].reasons == (NODE_LABEL_NOT_MATCH,)


@pytest.mark.parametrize(
    "pod",
    [
        incoming(),
        incoming(spread(action="ScheduleAnyway")),
        incoming(labels={"app": "web"}),
    ],
    ids=["no constraints", "only soft constraints", "no defaults without owners"],
)
def test_pre_filter_skips_without_hard_constraints(pod: Pod) -> None:
    table = build_table(THREE_ZONES)
    _, status = plugin_for(table).pre_filter(CycleState(), pod, table)
    assert status.is_skip


def test_invalid_selector_is_an_error() -> None:
    bad: dict[str, Any] = {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}
    table = build_table(THREE_ZONES)
    # Pod.from_dict refuses such a pod; one built another way still gets an error status.
    pod = dataclasses.replace(incoming(), topology_spread_constraints=(spread(selector=bad),))
    _, status = plugin_for(table).pre_filter(CycleState(), pod, table)
    assert status.code is Code.ERROR
    assert status.message().startswith(
        "get constraints from pod: obtaining pod's hard topology spread constraints: "
    )


def test_filter_without_pre_filter_state_is_an_error() -> None:
    table = build_table(THREE_ZONES)
    plugin = plugin_for(table)
    status = plugin.filter(CycleState(), incoming(spread()), table.node_infos[0])
    assert status.code is Code.ERROR
    assert status.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'
    batch = plugin.filter_nodes(CycleState(), incoming(spread()), table, table.all_rows())
    assert set(batch.codes.tolist()) == {int(Code.ERROR)}


def test_listed_default_constraints_apply_with_the_deduced_selector() -> None:
    args = PodTopologySpreadArgs.model_validate(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "DoNotSchedule"}
            ],
        }
    )
    service = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}},
    }
    nodes = _zones(("a1", "a"), ("b1", "b"))
    table = build_table(nodes, _web(1, "a1"))
    plugin = plugin_for(table, args, listers={"services": [service]})
    state = CycleState()
    pod = incoming()
    _, status = plugin.pre_filter(state, pod, table)
    assert status.is_success
    assert [brief(plugin.filter(state, pod, info)) for info in table.node_infos] == [
        "skew",
        "pass",
    ]
    # Without a Service (or controller) selecting it, the pod gets no default constraints.
    lonely = plugin_for(table, args)
    _, status = lonely.pre_filter(CycleState(), pod, table)
    assert status.is_skip
