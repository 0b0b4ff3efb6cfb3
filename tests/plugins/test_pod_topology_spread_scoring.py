"""PodTopologySpread Score: raw scores worked out by hand from upstream's formula
`count x ln(domains + 2) + (maxSkew - 1)` (rounded half away from zero), and NormalizeScore's
`100 x (max + min - score) // max`."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pytest

from plugins.pod_topology_spread import PodTopologySpreadArgs
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.testing import build_table
from scheduler.testing import make_pod
from tests.plugins.topology_spread_kit import incoming
from tests.plugins.topology_spread_kit import owned
from tests.plugins.topology_spread_kit import plugin_for
from tests.plugins.topology_spread_kit import raw_and_normalized_scores
from tests.plugins.topology_spread_kit import running
from tests.plugins.topology_spread_kit import spread
from tests.plugins.topology_spread_kit import zoned

SOFT = "ScheduleAnyway"


def _web(count: int, node: str, **labels: str) -> list[Pod]:
    return [running(f"{node}-{i}", node, {"app": "web", **labels}) for i in range(count)]


@dataclass
class Case:
    id: str
    pod: Pod
    nodes: list[Node]
    raw: dict[str, int]
    normalized: dict[str, int]
    pods: list[Pod] = field(default_factory=list)
    listers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


ABC = [zoned("a1", "a"), zoned("b1", "b"), zoned("c1", "c")]
RS_POD = owned(make_pod("incoming").labels(app="web").dict(), "ReplicaSet", "web", "apps/v1")
WEB_RS = {
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"selector": {"matchLabels": {"app": "web"}}},
}

CASES = [
    Case(
        # 3 domains: w = ln 5 = 1.609; a1 2w = 3.22 -> 3, b1 w = 1.61 -> 2, c1 0.
        "fewer matching pods score higher",
        incoming(spread(action=SOFT)),
        ABC,
        raw={"a1": 3, "b1": 2, "c1": 0},
        normalized={"a1": 0, "b1": 33, "c1": 100},
        pods=[*_web(2, "a1"), *_web(1, "b1")],
    ),
    Case(
        # maxSkew 3 adds 2 to each: 5.22 -> 5, 3.61 -> 4, 2; 100 x (7 - s) // 5.
        "maxSkew waters differences down",
        incoming(spread(action=SOFT, max_skew=3)),
        ABC,
        raw={"a1": 5, "b1": 4, "c1": 2},
        normalized={"a1": 40, "b1": 60, "c1": 100},
        pods=[*_web(2, "a1"), *_web(1, "b1")],
    ),
    Case(
        # Hostname: 3 scored nodes, w = ln 5; a1 1.61 -> 2.
        "hostname counts the node's own pods",
        incoming(spread(key=HOSTNAME_LABEL, action=SOFT)),
        [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")],
        raw={"a1": 2, "a2": 0, "b1": 0},
        normalized={"a1": 0, "a2": 100, "b1": 100},
        pods=_web(1, "a1"),
    ),
    Case(
        # bare lacks the zone: ignored (0) and out of the normalization; 2 domains, w = ln 4.
        "nodes without the key are ignored",
        incoming(spread(action=SOFT)),
        [zoned("a1", "a"), zoned("b1", "b"), zoned("bare", None)],
        raw={"a1": 1, "b1": 0, "bare": 0},
        normalized={"a1": 0, "b1": 100, "bare": 0},
        pods=_web(1, "a1"),
    ),
    Case(
        # a2 is outside the pod's node affinity: its pods do not count for zone a.
        "nodeAffinityPolicy Honor leaves pods on excluded nodes out",
        incoming(spread(action=SOFT), nodeSelector={"pool": "main"}),
        [zoned("a1", "a", pool="main"), zoned("a2", "a"), zoned("b1", "b", pool="main")],
        raw={"a1": 0, "a2": 0, "b1": 0},
        normalized={"a1": 100, "a2": 100, "b1": 100},
        pods=_web(3, "a2"),
    ),
    Case(
        # Ignore: zone a holds 3; w = ln 4 = 1.386; 4.16 -> 4.
        "nodeAffinityPolicy Ignore counts them",
        incoming(spread(action=SOFT, nodeAffinityPolicy="Ignore"), nodeSelector={"pool": "main"}),
        [zoned("a1", "a", pool="main"), zoned("a2", "a"), zoned("b1", "b", pool="main")],
        raw={"a1": 4, "a2": 4, "b1": 0},
        normalized={"a1": 0, "a2": 0, "b1": 100},
        pods=_web(3, "a2"),
    ),
    Case(
        # zone w = ln 4 = 1.386 (maxSkew 1), hostname w = ln 5 = 1.609 (maxSkew 2, +1):
        # a1 1.386 + 2.609 = 3.996 -> 4; a2 1.386 + 1 = 2.386 -> 2; b1 0 + 1 -> 1.
        "constraints add up",
        incoming(spread(action=SOFT), spread(key=HOSTNAME_LABEL, action=SOFT, max_skew=2)),
        [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")],
        raw={"a1": 4, "a2": 2, "b1": 1},
        normalized={"a1": 25, "a2": 75, "b1": 100},
        pods=_web(1, "a1"),
    ),
    Case(
        # System defaults (hostname maxSkew 3 first, then zone maxSkew 5), keys not required.
        # Hostname: 4 nodes, w = ln 6 = 1.792; zone: domains a, b and "" (nozone), w = ln 5.
        # a1: 2 x 1.792 + 2 + 2 x 1.609 + 4 = 12.80 -> 13;  a2: 2 + 7.22 = 9.22 -> 9;
        # b1: 3.79 + 5.61 = 9.40 -> 9;  nozone: hostname only, 3.79 -> 4.
        "system defaults follow the pod's ReplicaSet",
        RS_POD,
        [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b"), zoned("nozone", None)],
        raw={"a1": 13, "a2": 9, "b1": 9, "nozone": 4},
        normalized={"a1": 30, "a2": 61, "b1": 61, "nozone": 100},
        pods=[*_web(2, "a1"), *_web(1, "b1"), *_web(1, "nozone")],
        listers={"replicasets": [WEB_RS]},
    ),
    Case(
        # The Service selects app=web (tier does not matter): hostname and zone w = ln 4;
        # a1: 1.386 + 2 + 1.386 + 4 = 8.77 -> 9; b1: 2 + 4 = 6.
        "system defaults follow the Services selecting the pod",
        incoming(labels={"app": "web", "tier": "fe"}),
        [zoned("a1", "a"), zoned("b1", "b")],
        raw={"a1": 9, "b1": 6},
        normalized={"a1": 66, "b1": 100},
        pods=_web(1, "a1", tier="be"),
        listers={
            "services": [
                {
                    "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"selector": {"app": "web"}},
                },
                {
                    "metadata": {"name": "db", "namespace": "default"},
                    "spec": {"selector": {"app": "db"}},
                },
            ]
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_scores(case: Case) -> None:
    table = build_table(case.nodes, case.pods)
    result = raw_and_normalized_scores(plugin_for(table, listers=case.listers), case.pod, table)
    assert result is not None
    raw, normalized = result
    assert raw == case.raw
    assert normalized == case.normalized


STATEFUL = owned(make_pod("db-0").labels(app="db").dict(), "StatefulSet", "db", "apps/v1")
RC_POD = owned(make_pod("old-1").labels(app="old").dict(), "ReplicationController", "old", "v1")
DEPLOYMENT_POD = owned(make_pod("x").labels(app="web").dict(), "Deployment", "web", "apps/v1")


@pytest.mark.parametrize(
    ("pod", "listers", "counted"),
    [
        (
            STATEFUL,
            {
                "statefulsets": [
                    {
                        "metadata": {"name": "db", "namespace": "default"},
                        "spec": {"selector": {"matchLabels": {"app": "db"}}},
                    }
                ]
            },
            {"app": "db"},
        ),
        (
            RC_POD,
            {
                "replicationcontrollers": [
                    {
                        "metadata": {"name": "old", "namespace": "default"},
                        "spec": {"selector": {"app": "old"}},
                    }
                ]
            },
            {"app": "old"},
        ),
    ],
    ids=["StatefulSet", "ReplicationController"],
)
def test_system_defaults_follow_other_controllers(
    pod: Pod, listers: dict[str, list[dict[str, Any]]], counted: dict[str, str]
) -> None:
    # Two pods of the controller on a1 and one unrelated pod on b1: only a1 is crowded.
    nodes = [zoned("a1", "a"), zoned("b1", "b")]
    pods = [running("m1", "a1", counted), running("m2", "a1", counted), running("x", "b1")]
    table = build_table(nodes, pods)
    result = raw_and_normalized_scores(plugin_for(table, listers=listers), pod, table)
    assert result is not None
    _, normalized = result
    assert normalized["b1"] == 100
    assert normalized["a1"] < 100


@pytest.mark.parametrize(
    ("pod", "listers"),
    [
        (incoming(), {}),
        (RS_POD, {}),  # the ReplicaSet is not (or no longer) there
        (DEPLOYMENT_POD, {"replicasets": [WEB_RS]}),  # not a kind defaults look at
        (
            incoming(),
            {"services": [{"metadata": {"name": "s", "namespace": "default"}, "spec": {}}]},
        ),  # a Service without selector
        (incoming(spread()), {"replicasets": [WEB_RS]}),  # own (hard) constraints only
    ],
    ids=[
        "no owner",
        "missing ReplicaSet",
        "Deployment owner",
        "selectorless Service",
        "own hard constraint",
    ],
)
def test_pre_score_skips_without_soft_constraints(
    pod: Pod, listers: dict[str, list[dict[str, Any]]]
) -> None:
    table = build_table(ABC)
    status = plugin_for(table, listers=listers).pre_score(
        CycleState(), pod, table, table.all_rows()
    )
    assert status.is_skip


def test_list_defaulting_requires_every_key() -> None:
    args = PodTopologySpreadArgs.model_validate(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": SOFT},
            ],
        }
    )
    table = build_table([zoned("a1", "a"), zoned("bare", None)], _web(1, "a1"))
    plugin = plugin_for(table, args, listers={"replicasets": [WEB_RS]})
    result = raw_and_normalized_scores(plugin, RS_POD, table)
    assert result is not None
    _, normalized = result
    # bare is ignored: only listed defaults (like a pod's own constraints) require the keys.
    assert normalized["bare"] == 0
    assert normalized["a1"] == 100


def test_weights_count_only_domains_of_scored_nodes() -> None:
    table = build_table(ABC, _web(1, "a1"))
    plugin = plugin_for(table)
    pod = incoming(spread(action=SOFT))
    state = CycleState()
    rows = np.array([0, 1], dtype=np.int64)  # c1 was filtered out: two domains, w = ln 4
    assert plugin.pre_score(state, pod, table, rows).is_success
    assert plugin.score_nodes(state, pod, table, rows).tolist() == [1, 0]  # 1.386 -> 1
    every = CycleState()
    assert plugin.pre_score(every, pod, table, table.all_rows()).is_success
    assert plugin.score_nodes(every, pod, table, rows).tolist() == [2, 0]  # ln 5: 1.609 -> 2


def test_normalize_with_every_node_ignored() -> None:
    table = build_table([zoned("bare1", None), zoned("bare2", None)])
    result = raw_and_normalized_scores(plugin_for(table), incoming(spread(action=SOFT)), table)
    assert result == ({"bare1": 0, "bare2": 0}, {"bare1": 0, "bare2": 0})


def test_score_without_pre_score_state_is_an_error() -> None:
    table = build_table(ABC)
    plugin = plugin_for(table)
    _, status = plugin.score(CycleState(), incoming(), table.node_infos[0])
    assert status.code is Code.ERROR
    assert (
        status.message() == 'error reading "PreScorePodTopologySpread" from cycleState: not found'
    )
