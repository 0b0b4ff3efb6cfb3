"""InterPodAffinity PreFilter/Filter: upstream's documented required-term behaviours."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest

from plugins.inter_pod_affinity import AFFINITY_RULES_NOT_MATCH
from plugins.inter_pod_affinity import ANTI_AFFINITY_RULES_NOT_MATCH
from plugins.inter_pod_affinity import EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
from plugins.inter_pod_affinity import InterPodAffinity
from plugins.inter_pod_affinity import InterPodAffinityArgs
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Node
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
ZONE = ZONE_LABEL

PASS = ""
AFFINITY = f"{Code.UNSCHEDULABLE_AND_UNRESOLVABLE.label}: {AFFINITY_RULES_NOT_MATCH}"
ANTI = f"{Code.UNSCHEDULABLE.label}: {ANTI_AFFINITY_RULES_NOT_MATCH}"
EXISTING = f"{Code.UNSCHEDULABLE.label}: {EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH}"


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def four_nodes() -> list[Node]:
    """n1 and n2 in zone a, n3 in zone b, n4 without a zone label."""
    return [
        make_node("n1").zone("a").obj(),
        make_node("n2").zone("a").obj(),
        make_node("n3").zone("b").obj(),
        make_node("n4").obj(),
    ]


def outcome(status: Status) -> str:
    return PASS if status.is_success else f"{status.code.label}: {status.message()}"


def plugin_for(table: NodeTable, namespaces: Sequence[dict[str, Any]] = ()) -> InterPodAffinity:
    return InterPodAffinity(
        InterPodAffinityArgs(), FakeHandle(table, listers={"namespaces": namespaces})
    )


def filter_outcomes(
    plugin: InterPodAffinity, state: CycleState, pod: Pod, table: NodeTable
) -> list[str]:
    """Per-node results, after checking the batch form says exactly the same."""
    each = [outcome(s) for s in filter_each_node(plugin, state, pod, table)]
    batch = [outcome(s) for s in filter_batch_as_statuses(plugin, state, pod, table)]
    assert batch == each
    return each


@dataclass
class Case:
    id: str
    pod: Pod
    existing: list[Pod]
    expected: list[str]  # per node n1..n4
    namespaces: list[dict[str, Any]] = field(default_factory=list)


def web(name: str, node: str, ns: str = "default") -> Pod:
    return make_pod(name, ns).label("app", "web").node(node).obj()


def db(name: str, node: str, ns: str = "default") -> Pod:
    return make_pod(name, ns).label("app", "db").node(node).obj()


CASES = [
    Case(
        "affinity-satisfied-in-the-zone-of-a-matching-pod",
        make_pod("p").pod_affinity("required", ZONE, {"app": "db"}).obj(),
        [db("d1", "n1")],
        [PASS, PASS, AFFINITY, AFFINITY],
    ),
    Case(
        "affinity-without-any-matching-pod-fails-everywhere",
        make_pod("p").pod_affinity("required", ZONE, {"app": "db"}).obj(),
        [web("w1", "n1")],
        [AFFINITY, AFFINITY, AFFINITY, AFFINITY],
    ),
    Case(
        "first-pod-of-a-self-selecting-group-may-go-to-any-node-with-the-key",
        make_pod("p").label("app", "db").pod_affinity("required", ZONE, {"app": "db"}).obj(),
        [web("w1", "n1")],
        [PASS, PASS, PASS, AFFINITY],
    ),
    Case(
        "self-selecting-pod-must-join-the-group-once-a-member-runs",
        make_pod("p").label("app", "db").pod_affinity("required", ZONE, {"app": "db"}).obj(),
        [db("d1", "n3")],
        [AFFINITY, AFFINITY, PASS, AFFINITY],
    ),
    Case(
        "matching-pod-on-a-node-without-the-key-does-not-end-the-first-pod-exemption",
        make_pod("p").label("app", "db").pod_affinity("required", ZONE, {"app": "db"}).obj(),
        [db("d1", "n4")],
        [PASS, PASS, PASS, AFFINITY],
    ),
    Case(
        "node-without-the-topology-key-fails-affinity",
        make_pod("p").pod_affinity("required", "rack", {"app": "db"}).obj(),
        [db("d1", "n1")],
        [AFFINITY, AFFINITY, AFFINITY, AFFINITY],
    ),
    Case(
        "all-affinity-terms-must-match-one-and-the-same-pod",
        make_pod("p")
        .pod_affinity("required", ZONE, {"app": "db"})
        .pod_affinity("required", ZONE, {"tier": "cache"})
        .obj(),
        [db("d1", "n1"), make_pod("c1").label("tier", "cache").node("n1").obj()],
        [AFFINITY, AFFINITY, AFFINITY, AFFINITY],
    ),
    Case(
        "a-pod-matching-all-affinity-terms-satisfies-them",
        make_pod("p")
        .pod_affinity("required", ZONE, {"app": "db"})
        .pod_affinity("required", HOST, {"tier": "cache"})
        .obj(),
        [make_pod("dc").labels(app="db", tier="cache").node("n2").obj()],
        [AFFINITY, PASS, AFFINITY, AFFINITY],
    ),
    Case(
        "affinity-ignores-pods-of-other-namespaces-by-default",
        make_pod("p").pod_affinity("required", ZONE, {"app": "db"}).obj(),
        [db("d1", "n1", ns="other")],
        [AFFINITY, AFFINITY, AFFINITY, AFFINITY],
    ),
    Case(
        "affinity-namespaces-field-selects-other-namespaces",
        make_pod("p").pod_affinity("required", ZONE, {"app": "db"}, namespaces=["other"]).obj(),
        [db("d1", "n1", ns="other")],
        [PASS, PASS, AFFINITY, AFFINITY],
    ),
    Case(
        "affinity-namespace-selector-selects-namespaces-by-label",
        make_pod("p")
        .pod_affinity(
            "required", ZONE, {"app": "db"}, namespace_selector={"matchLabels": {"team": "x"}}
        )
        .obj(),
        [db("d1", "n1", ns="team-x"), db("d2", "n3", ns="team-y")],
        [PASS, PASS, AFFINITY, AFFINITY],
        [namespace("team-x", team="x"), namespace("team-y", team="y")],
    ),
    Case(
        "empty-namespace-selector-selects-every-namespace",
        make_pod("p").pod_affinity("required", ZONE, {"app": "db"}, namespace_selector={}).obj(),
        [db("d1", "n3", ns="anywhere")],
        [AFFINITY, AFFINITY, PASS, AFFINITY],
    ),
    Case(
        "anti-affinity-rejects-the-node-running-a-matching-pod",
        make_pod("p").pod_affinity("required", HOST, {"app": "web"}, anti=True).obj(),
        [web("w1", "n1")],
        [ANTI, PASS, PASS, PASS],
    ),
    Case(
        "anti-affinity-by-zone-rejects-the-whole-zone",
        make_pod("p").pod_affinity("required", ZONE, {"app": "web"}, anti=True).obj(),
        [web("w1", "n1")],
        [ANTI, ANTI, PASS, PASS],
    ),
    Case(
        "anti-affinity-does-not-apply-to-nodes-without-the-key",
        make_pod("p").pod_affinity("required", "rack", {"app": "web"}, anti=True).obj(),
        [web("w1", "n1"), web("w4", "n4")],
        [PASS, PASS, PASS, PASS],
    ),
    Case(
        "anti-affinity-namespace-selector-uses-namespace-labels",
        make_pod("p")
        .pod_affinity(
            "required",
            HOST,
            {"app": "web"},
            anti=True,
            namespace_selector={"matchLabels": {"env": "prod"}},
        )
        .obj(),
        [web("w1", "n1", ns="prod"), web("w2", "n2", ns="dev")],
        [ANTI, PASS, PASS, PASS],
        [namespace("prod", env="prod"), namespace("dev", env="dev")],
    ),
    Case(
        "existing-pods-anti-affinity-repels-the-incoming-pod-from-its-zone",
        make_pod("p").label("app", "web").obj(),
        [make_pod("e1").pod_affinity("required", ZONE, {"app": "web"}, anti=True).node("n1").obj()],
        [EXISTING, EXISTING, PASS, PASS],
    ),
    Case(
        "existing-pods-anti-affinity-namespace-selector-reads-the-incoming-namespace-labels",
        make_pod("p", "payments").label("app", "web").obj(),
        [
            make_pod("e1")
            .pod_affinity(
                "required",
                HOST,
                {"app": "web"},
                anti=True,
                namespace_selector={"matchLabels": {"pci": "yes"}},
            )
            .node("n3")
            .obj()
        ],
        [PASS, PASS, EXISTING, PASS],
        [namespace("payments", pci="yes")],
    ),
    Case(
        "affinity-is-checked-before-anti-affinity",
        make_pod("p")
        .pod_affinity("required", ZONE, {"app": "db"})
        .pod_affinity("required", HOST, {"app": "web"}, anti=True)
        .obj(),
        [db("d1", "n1"), web("w1", "n1"), web("w3", "n3")],
        [ANTI, PASS, AFFINITY, AFFINITY],
    ),
    Case(
        "anti-affinity-is-checked-before-existing-pods-anti-affinity",
        make_pod("p")
        .label("app", "web")
        .pod_affinity("required", HOST, {"app": "db"}, anti=True)
        .obj(),
        [
            db("d1", "n1"),
            make_pod("e1")
            .pod_affinity("required", ZONE, {"app": "web"}, anti=True)
            .node("n2")
            .obj(),
        ],
        [ANTI, EXISTING, PASS, PASS],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_filter(case: Case) -> None:
    table = build_table(four_nodes(), case.existing)
    plugin = plugin_for(table, case.namespaces)
    state = CycleState()
    result, status = plugin.pre_filter(state, case.pod, table)
    assert result is None
    assert status.is_success, status
    assert filter_outcomes(plugin, state, case.pod, table) == case.expected


def test_reason_texts_and_codes_are_upstreams() -> None:
    assert AFFINITY_RULES_NOT_MATCH == "node(s) didn't match pod affinity rules"
    assert ANTI_AFFINITY_RULES_NOT_MATCH == "node(s) didn't match pod anti-affinity rules"
    assert EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH == (
        "node(s) didn't satisfy existing pods anti-affinity rules"
    )


@pytest.mark.parametrize(
    ("pod", "existing", "skipped"),
    [
        pytest.param(
            make_pod("p").obj(), [web("w1", "n1")], True, id="no-terms-and-no-anti-affinity-pods"
        ),
        pytest.param(
            make_pod("p").pod_affinity("preferred", ZONE, {"app": "web"}, weight=3).obj(),
            [web("w1", "n1")],
            True,
            id="preferred-terms-only",
        ),
        pytest.param(
            make_pod("p").label("app", "web").obj(),
            [
                make_pod("e")
                .pod_affinity("required", ZONE, {"app": "db"}, anti=True)
                .node("n1")
                .obj()
            ],
            True,
            id="existing-anti-affinity-that-does-not-match",
        ),
        pytest.param(
            make_pod("p", "other").label("app", "web").obj(),
            [
                make_pod("e")
                .pod_affinity("required", ZONE, {"app": "web"}, anti=True)
                .node("n1")
                .obj()
            ],
            True,
            id="existing-anti-affinity-covers-only-its-own-namespace-by-default",
        ),
        pytest.param(
            make_pod("p").label("app", "web").obj(),
            [
                make_pod("e")
                .pod_affinity("required", "rack", {"app": "web"}, anti=True)
                .node("n1")
                .obj()
            ],
            True,
            id="existing-anti-affinity-matching-on-a-node-without-its-key",
        ),
        pytest.param(
            make_pod("p").label("app", "web").obj(),
            [
                make_pod("e")
                .pod_affinity("required", ZONE, {"app": "web"}, anti=True)
                .node("n1")
                .obj()
            ],
            False,
            id="existing-anti-affinity-that-matches",
        ),
        pytest.param(
            make_pod("p").pod_affinity("required", ZONE, {"app": "x"}, anti=True).obj(),
            [],
            False,
            id="own-required-anti-affinity-even-with-nothing-to-match",
        ),
    ],
)
def test_pre_filter_skips_when_nothing_can_reject(
    pod: Pod, existing: list[Pod], skipped: bool
) -> None:
    table = build_table(four_nodes(), existing)
    state = CycleState()
    _, status = plugin_for(table).pre_filter(state, pod, table)
    assert status.is_skip is skipped
    assert (state.get("PreFilterInterPodAffinity", object) is None) is skipped


def test_filter_without_pre_filter_state_is_an_error() -> None:
    table = build_table(four_nodes())
    plugin = plugin_for(table)
    pod = make_pod("p").obj()
    status = plugin.filter(CycleState(), pod, table.node_infos[0])
    assert status.code is Code.ERROR
    batch = filter_batch_as_statuses(plugin, CycleState(), pod, table)
    assert {s.code for s in batch} == {Code.ERROR}


def test_unknown_namespace_has_no_labels_for_existing_selectors() -> None:
    """An existing pod's NotIn namespace selector selects a namespace the lister doesn't know."""
    existing = (
        make_pod("e")
        .pod_affinity(
            "required",
            HOST,
            {"app": "web"},
            anti=True,
            namespace_selector={
                "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]
            },
        )
        .node("n2")
        .obj()
    )
    pod = make_pod("p", "unlisted").label("app", "web").obj()
    table = build_table(four_nodes(), [existing])
    plugin = plugin_for(table)
    state = CycleState()
    plugin.pre_filter(state, pod, table)
    assert filter_outcomes(plugin, state, pod, table) == [PASS, EXISTING, PASS, PASS]
