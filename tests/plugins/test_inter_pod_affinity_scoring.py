"""InterPodAffinity PreScore/Score/NormalizeScore: preferred terms, hard weight, normalization."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pytest

from plugins.inter_pod_affinity import InterPodAffinity
from plugins.inter_pod_affinity import InterPodAffinityArgs
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.objects.node import ZONE_LABEL
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node

HOST = "kubernetes.io/hostname"
ZONE = ZONE_LABEL
SKIP = None


def nodes() -> list[Any]:
    """n1, n2 in zone a; n3 in zone b; n4 without a zone label."""
    return [
        make_node("n1").zone("a").obj(),
        make_node("n2").zone("a").obj(),
        make_node("n3").zone("b").obj(),
        make_node("n4").obj(),
    ]


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


def pod_with(name: str, node: str, ns: str = "default", **labels: str) -> Pod:
    return make_pod(name, ns).labels(**labels).node(node).obj()


@dataclass
class Case:
    id: str
    pod: Pod
    existing: list[Pod]
    raw: list[int] | None  # None: PreScore skips
    args: InterPodAffinityArgs = field(default_factory=InterPodAffinityArgs)
    namespaces: list[dict[str, Any]] = field(default_factory=list)


CASES = [
    Case(
        "preferred-affinity-adds-its-weight-to-the-matching-pods-zone",
        make_pod("p").pod_affinity("preferred", ZONE, {"app": "db"}, weight=5).obj(),
        [pod_with("d", "n1", app="db")],
        [5, 5, 0, 0],
    ),
    Case(
        "each-matching-pod-counts",
        make_pod("p").pod_affinity("preferred", ZONE, {"app": "db"}, weight=5).obj(),
        [pod_with("d1", "n1", app="db"), pod_with("d2", "n2", app="db")],
        [10, 10, 0, 0],
    ),
    Case(
        "preferred-anti-affinity-subtracts-its-weight",
        make_pod("p").pod_affinity("preferred", ZONE, {"app": "web"}, anti=True, weight=4).obj(),
        [pod_with("w", "n3", app="web")],
        [0, 0, -4, 0],
    ),
    Case(
        "terms-add-up-per-topology-key",
        make_pod("p")
        .pod_affinity("preferred", ZONE, {"app": "db"}, weight=3)
        .pod_affinity("preferred", HOST, {"app": "web"}, anti=True, weight=2)
        .obj(),
        [pod_with("d", "n1", app="db"), pod_with("w", "n1", app="web")],
        [1, 3, 0, 0],
    ),
    Case(
        "hard-affinity-of-existing-pods-scores-hard-pod-affinity-weight",
        make_pod("p").label("app", "web").obj(),
        [make_pod("e").pod_affinity("required", ZONE, {"app": "web"}).node("n3").obj()],
        [0, 0, 7, 0],
        InterPodAffinityArgs(hard_pod_affinity_weight=7),
    ),
    Case(
        "hard-affinity-weight-defaults-to-one",
        make_pod("p").label("app", "web").obj(),
        [make_pod("e").pod_affinity("required", ZONE, {"app": "web"}).node("n3").obj()],
        [0, 0, 1, 0],
    ),
    Case(
        "zero-hard-affinity-weight-ignores-existing-required-terms",
        make_pod("p").label("app", "web").obj(),
        [make_pod("e").pod_affinity("required", ZONE, {"app": "web"}).node("n3").obj()],
        SKIP,
        InterPodAffinityArgs(hard_pod_affinity_weight=0),
    ),
    Case(
        "existing-pods-preferred-affinity-attracts-the-incoming-pod",
        make_pod("p").label("app", "web").obj(),
        [make_pod("e").pod_affinity("preferred", ZONE, {"app": "web"}, weight=9).node("n1").obj()],
        [9, 9, 0, 0],
    ),
    Case(
        "existing-pods-preferred-anti-affinity-repels-the-incoming-pod",
        make_pod("p").label("app", "web").obj(),
        [
            make_pod("e")
            .pod_affinity("preferred", HOST, {"app": "web"}, anti=True, weight=6)
            .node("n1")
            .obj()
        ],
        [-6, 0, 0, 0],
    ),
    Case(
        "ignoring-existing-preferred-terms-skips-a-pod-without-preferred-terms",
        make_pod("p").label("app", "web").obj(),
        [make_pod("e").pod_affinity("preferred", ZONE, {"app": "web"}, weight=9).node("n1").obj()],
        SKIP,
        InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
    ),
    Case(
        "ignoring-existing-preferred-terms-still-counts-them-when-the-pod-has-its-own",
        make_pod("p")
        .label("app", "web")
        .pod_affinity("preferred", ZONE, {"app": "none"}, weight=1)
        .obj(),
        [make_pod("e").pod_affinity("preferred", ZONE, {"app": "web"}, weight=9).node("n1").obj()],
        [9, 9, 0, 0],
        InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
    ),
    Case(
        "existing-pods-terms-cover-their-own-namespace-by-default",
        make_pod("p", "other").label("app", "web").obj(),
        [make_pod("e").pod_affinity("preferred", ZONE, {"app": "web"}, weight=9).node("n1").obj()],
        SKIP,
    ),
    Case(
        "existing-pods-namespace-selector-reads-the-incoming-namespace-labels",
        make_pod("p", "blue").label("app", "web").obj(),
        [
            make_pod("e")
            .pod_affinity(
                "preferred",
                ZONE,
                {"app": "web"},
                weight=2,
                namespace_selector={"matchLabels": {"c": "b"}},
            )
            .node("n3")
            .obj()
        ],
        [0, 0, 2, 0],
        namespaces=[namespace("blue", c="b")],
    ),
    Case(
        "incoming-namespace-selector-selects-existing-pods-namespaces",
        make_pod("p")
        .pod_affinity(
            "preferred",
            HOST,
            {"app": "db"},
            weight=8,
            namespace_selector={"matchLabels": {"c": "b"}},
        )
        .obj(),
        [pod_with("d1", "n2", "blue", app="db"), pod_with("d2", "n3", "red", app="db")],
        [0, 8, 0, 0],
        namespaces=[namespace("blue", c="b"), namespace("red", c="r")],
    ),
    Case(
        "nothing-matching-skips",
        make_pod("p").pod_affinity("preferred", ZONE, {"app": "db"}, weight=5).obj(),
        [pod_with("w", "n1", app="web")],
        SKIP,
    ),
    Case(
        "matches-only-on-nodes-without-the-key-skip",
        make_pod("p").pod_affinity("preferred", ZONE, {"app": "db"}, weight=5).obj(),
        [pod_with("d", "n4", app="db")],
        SKIP,
    ),
    Case(
        "weights-that-cancel-out-still-score",
        make_pod("p")
        .pod_affinity("preferred", ZONE, {"app": "db"}, weight=2)
        .pod_affinity("preferred", ZONE, {"app": "db"}, anti=True, weight=2)
        .obj(),
        [pod_with("d", "n1", app="db")],
        [0, 0, 0, 0],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_raw_scores(case: Case) -> None:
    table = build_table(nodes(), case.existing)
    plugin = InterPodAffinity(case.args, FakeHandle(table, listers={"namespaces": case.namespaces}))
    state = CycleState()
    status = plugin.pre_score(state, case.pod, table, table.all_rows())
    if case.raw is SKIP:
        assert status.is_skip, status
        return
    assert status.is_success, status
    assert score_each_node(plugin, state, case.pod, table) == case.raw
    assert score_batch(plugin, state, case.pod, table) == case.raw


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        pytest.param([5, 5, 0, 0], [100, 100, 0, 0], id="positive"),
        pytest.param([0, 0, -4, 0], [100, 100, 0, 100], id="negative"),
        pytest.param([-3, 0, 7], [0, 30, 100], id="mixed-signs"),
        pytest.param([0, 1, 3], [0, 33, 100], id="truncates"),
        # 100 * (29 / 100) is 28.999999999999996 in float64, as in upstream's arithmetic.
        pytest.param([0, 29, 100], [0, 28, 100], id="float64-steps"),
        pytest.param([4, 4, 4], [0, 0, 0], id="all-equal"),
        pytest.param([], [], id="no-nodes"),
    ],
)
def test_normalize_maps_min_to_zero_and_max_to_one_hundred(
    raw: list[int], normalized: list[int]
) -> None:
    table = build_table(nodes(), [pod_with("d", "n1", app="db")])
    plugin = InterPodAffinity(InterPodAffinityArgs(), FakeHandle(table))
    pod = make_pod("p").pod_affinity("preferred", ZONE, {"app": "db"}, weight=5).obj()
    state = CycleState()
    assert plugin.pre_score(state, pod, table, table.all_rows()).is_success
    extensions = plugin.score_extensions()
    assert extensions is plugin
    scores = np.asarray(raw, dtype=np.int64)
    rows = np.arange(len(raw), dtype=np.int64)
    assert extensions.normalize_score(state, pod, table, rows, scores).is_success
    assert scores.tolist() == normalized


def test_score_without_pre_score_state_is_an_error() -> None:
    table = build_table(nodes())
    plugin = InterPodAffinity(InterPodAffinityArgs(), FakeHandle(table))
    pod = make_pod("p").obj()
    score, status = plugin.score(CycleState(), pod, table.node_infos[0])
    assert (score, status.is_success) == (0, False)
    scores = np.zeros(1, dtype=np.int64)
    assert not plugin.normalize_score(
        CycleState(), pod, table, np.zeros(1, dtype=np.int64), scores
    ).is_success
    with pytest.raises(LookupError):
        plugin.score_nodes(CycleState(), pod, table, table.all_rows())


def test_scores_only_the_given_rows() -> None:
    table = build_table(nodes(), [pod_with("d", "n3", app="db")])
    plugin = InterPodAffinity(InterPodAffinityArgs(), FakeHandle(table))
    pod = make_pod("p").pod_affinity("preferred", ZONE, {"app": "db"}, weight=5).obj()
    state = CycleState()
    rows = np.asarray([2, 0], dtype=np.int64)
    status: Status = plugin.pre_score(state, pod, table, rows)
    assert status.is_success
    assert score_batch(plugin, state, pod, table, rows) == [5, 0]
