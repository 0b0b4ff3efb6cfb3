"""InterPodAffinity on generated clusters: batch and per-node forms agree with each other and
with a brute-force reading of upstream's rules that scans every pod for every node."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

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
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.pod_affinity import AffinityTerm
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node

KEYS = (ZONE_LABEL, HOSTNAME_LABEL, "rack")
NAMESPACE_LABELS = {"default": {"team": "x"}, "ns1": {"team": "x"}, "ns2": {"team": "y"}, "ns3": {}}

# ---- generated clusters --------------------------------------------------------------------

SELECTORS: list[dict[str, Any]] = [
    {"match_labels": {"app": "web"}},
    {"match_labels": {"app": "db"}},
    {"match_labels": {"app": "web", "tier": "t1"}},
    {"match_expressions": [{"key": "app", "operator": "Exists"}]},
    {"match_expressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]},
    {},
]
NAMESPACE_CHOICES: list[dict[str, Any]] = [
    {},
    {"namespaces": ["ns1"]},
    {"namespaces": ["default", "ns2"]},
    {"namespace_selector": {}},
    {"namespace_selector": {"matchLabels": {"team": "x"}}},
    {"namespace_selector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}},
]


@st.composite
def terms(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "kind": draw(st.sampled_from(["required", "preferred"])),
        "topology_key": draw(st.sampled_from(KEYS)),
        "anti": draw(st.booleans()),
        "weight": draw(st.integers(1, 10)),
        **draw(st.sampled_from(SELECTORS)),
        **draw(st.sampled_from(NAMESPACE_CHOICES)),
    }


@st.composite
def pods(draw: st.DrawFn, name: str, node: str | None, min_terms: int, max_terms: int) -> Pod:
    builder = make_pod(name, draw(st.sampled_from(sorted(NAMESPACE_LABELS))))
    app = draw(st.sampled_from(["web", "db", None]))
    if app is not None:
        builder = builder.label("app", app)
    if draw(st.booleans()):
        builder = builder.label("tier", "t1")
    for term in draw(st.lists(terms(), min_size=min_terms, max_size=max_terms)):
        kind, key = term.pop("kind"), term.pop("topology_key")
        builder = builder.pod_affinity(kind, key, **term)
    if node is not None:
        builder = builder.node(node)
    return builder.obj()


@st.composite
def nodes(draw: st.DrawFn) -> list[Node]:
    result = []
    for i in range(draw(st.integers(1, 7))):
        builder = make_node(f"n{i}")
        zone = draw(st.sampled_from(["a", "b", None]))
        if zone is not None:
            builder = builder.zone(zone)
        rack = draw(st.sampled_from(["r1", "r2", None]))
        if rack is not None:
            builder = builder.label("rack", rack)
        result.append(builder.obj())
    return result


@dataclass
class Cluster:
    nodes: list[Node]
    placed: list[tuple[Pod, Node]]
    incoming: Pod
    extra: tuple[Pod, Node]  # a pod for AddPod
    known_namespaces: list[str]
    args: InterPodAffinityArgs


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    node_list = draw(nodes())
    placed = []
    for i in range(draw(st.integers(0, 8))):
        node = draw(st.sampled_from(node_list))
        placed.append((draw(pods(f"e{i}", node.name, 0, 2)), node))
    extra_node = draw(st.sampled_from(node_list))
    return Cluster(
        nodes=node_list,
        placed=placed,
        incoming=draw(pods("incoming", None, 1, 3)),
        extra=(draw(pods("extra", extra_node.name, 0, 2)), extra_node),
        known_namespaces=draw(st.lists(st.sampled_from(sorted(NAMESPACE_LABELS)), unique=True)),
        args=InterPodAffinityArgs(
            hard_pod_affinity_weight=draw(st.sampled_from([0, 1, 5])),
            ignore_preferred_terms_of_existing_pods=draw(st.booleans()),
        ),
    )


# ---- brute force -----------------------------------------------------------------------------


class Reference:
    """Upstream's rules, evaluated by scanning every placed pod for every node."""

    def __init__(self, cluster: Cluster, placed: Sequence[tuple[Pod, Node]]) -> None:
        self.pod = cluster.incoming
        self.placed = placed
        self.known = {ns: NAMESPACE_LABELS[ns] for ns in cluster.known_namespaces}
        self.args = cluster.args

    def incoming_selects(self, term: AffinityTerm, other: Pod) -> bool:
        """A term of the incoming pod: its namespace selector selects known namespaces."""
        selector = term.namespace_selector
        in_namespace = other.namespace in term.namespaces or (
            selector is not None
            and (
                selector.is_everything
                or (other.namespace in self.known and selector.matches(self.known[other.namespace]))
            )
        )
        return term.selector is not None and in_namespace and term.selector.matches(other.labels)

    def existing_selects_incoming(self, term: AffinityTerm) -> bool:
        """A term of an existing pod, against the incoming pod's namespace labels."""
        labels = self.known.get(self.pod.namespace, {})
        selector = term.namespace_selector
        in_namespace = self.pod.namespace in term.namespaces or (
            selector is not None and selector.matches(labels)
        )
        return term.selector is not None and in_namespace and term.selector.matches(self.pod.labels)

    def required(self, anti: bool) -> tuple[AffinityTerm, ...]:
        section = self.pod.pod_anti_affinity if anti else self.pod.pod_affinity
        return section.required if section is not None else ()

    def existing_repellers(self) -> list[tuple[AffinityTerm, Node]]:
        found = []
        for other, node in self.placed:
            if other.pod_anti_affinity is None:
                continue
            for term in other.pod_anti_affinity.required:
                if self.existing_selects_incoming(term) and term.topology_key in node.labels:
                    found.append((term, node))
        return found

    def pre_filter_skips(self) -> bool:
        return (
            not self.required(False) and not self.required(True) and not self.existing_repellers()
        )

    def filter(self, node: Node) -> str:
        affinity = self.required(False)
        if affinity:
            if any(t.topology_key not in node.labels for t in affinity):
                return AFFINITY_RULES_NOT_MATCH
            matching = [
                (p, m) for p, m in self.placed if all(self.incoming_selects(t, p) for t in affinity)
            ]
            exists = all(
                any(
                    m.labels.get(t.topology_key) == node.labels[t.topology_key] for _, m in matching
                )
                for t in affinity
            )
            if not exists:
                counted = any(t.topology_key in m.labels for _, m in matching for t in affinity)
                own = all(self.incoming_selects(t, self.pod) for t in affinity)
                if counted or not own:
                    return AFFINITY_RULES_NOT_MATCH
        for term in self.required(True):
            key = term.topology_key
            if key in node.labels and any(
                self.incoming_selects(term, p) and m.labels.get(key) == node.labels[key]
                for p, m in self.placed
            ):
                return ANTI_AFFINITY_RULES_NOT_MATCH
        for term, m in self.existing_repellers():
            if node.labels.get(term.topology_key) == m.labels[term.topology_key]:
                return EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
        return ""

    def scores(self, nodes: Sequence[Node]) -> list[int] | None:
        """Raw scores, or None when PreScore skips."""
        own_affinity = self.pod.pod_affinity.preferred if self.pod.pod_affinity else ()
        own_anti = self.pod.pod_anti_affinity.preferred if self.pod.pod_anti_affinity else ()
        if self.args.ignore_preferred_terms_of_existing_pods and not (own_affinity or own_anti):
            return None
        weighted: list[tuple[AffinityTerm, int, Node]] = []
        for other, m in self.placed:
            weighted += [
                (w.term, w.weight, m) for w in own_affinity if self.incoming_selects(w.term, other)
            ]
            weighted += [
                (w.term, -w.weight, m) for w in own_anti if self.incoming_selects(w.term, other)
            ]
            if other.pod_affinity is not None:
                if self.args.hard_pod_affinity_weight > 0:
                    weighted += [
                        (t, self.args.hard_pod_affinity_weight, m)
                        for t in other.pod_affinity.required
                        if self.existing_selects_incoming(t)
                    ]
                weighted += [
                    (w.term, w.weight, m)
                    for w in other.pod_affinity.preferred
                    if self.existing_selects_incoming(w.term)
                ]
            if other.pod_anti_affinity is not None:
                weighted += [
                    (w.term, -w.weight, m)
                    for w in other.pod_anti_affinity.preferred
                    if self.existing_selects_incoming(w.term)
                ]
        weighted = [(t, w, m) for t, w, m in weighted if t.topology_key in m.labels]
        if not weighted:
            return None
        return [
            sum(
                w
                for t, w, m in weighted
                if n.labels.get(t.topology_key) == m.labels[t.topology_key]
            )
            for n in nodes
        ]


# ---- the properties --------------------------------------------------------------------------


def setup(cluster: Cluster) -> tuple[InterPodAffinity, NodeTable]:
    table = build_table(cluster.nodes, [p for p, _ in cluster.placed])
    namespaces = [
        {"metadata": {"name": ns, "labels": NAMESPACE_LABELS[ns]}}
        for ns in cluster.known_namespaces
    ]
    return InterPodAffinity(
        cluster.args, FakeHandle(table, listers={"namespaces": namespaces})
    ), table


def reasons(statuses: list[Status]) -> list[tuple[Code, str]]:
    return [(s.code, s.message()) for s in statuses]


def expected_filter(reference: Reference, nodes: Sequence[Node]) -> list[tuple[Code, str]]:
    codes = {
        "": Code.SUCCESS,
        AFFINITY_RULES_NOT_MATCH: Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ANTI_AFFINITY_RULES_NOT_MATCH: Code.UNSCHEDULABLE,
        EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Code.UNSCHEDULABLE,
    }
    return [(codes[r], r) for r in (reference.filter(n) for n in nodes)]


def table_nodes(table: NodeTable) -> list[Node]:
    found = [info.node for info in table.node_infos]
    assert all(n is not None for n in found)
    return [n for n in found if n is not None]


def check_filter(
    plugin: InterPodAffinity,
    state: CycleState,
    cluster: Cluster,
    table: NodeTable,
    placed: Sequence[tuple[Pod, Node]],
) -> None:
    pod = cluster.incoming
    each = reasons(filter_each_node(plugin, state, pod, table))
    assert reasons(filter_batch_as_statuses(plugin, state, pod, table)) == each
    assert each == expected_filter(Reference(cluster, placed), table_nodes(table))
    # A subset of rows in another order answers row by row the same.
    rows = np.arange(table.size, dtype=np.int64)[::-2]
    subset = reasons(filter_batch_as_statuses(plugin, state, pod, table, rows))
    assert subset == [each[int(r)] for r in rows]


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(clusters())
def test_filter_forms_agree_with_the_reference(cluster: Cluster) -> None:
    plugin, table = setup(cluster)
    state = CycleState()
    _, status = plugin.pre_filter(state, cluster.incoming, table)
    reference = Reference(cluster, cluster.placed)
    assert status.is_skip is reference.pre_filter_skips()
    if status.is_skip:
        return
    check_filter(plugin, state, cluster, table, cluster.placed)


@SETTINGS
@given(clusters())
def test_add_and_remove_pod_agree_with_the_reference(cluster: Cluster) -> None:
    plugin, table = setup(cluster)
    state = CycleState()
    _, status = plugin.pre_filter(state, cluster.incoming, table)
    if status.is_skip:
        return
    extra, extra_node = cluster.extra
    info_of = {info.name: info for info in table.node_infos}

    added = state.clone()
    assert plugin.add_pod(added, cluster.incoming, extra, info_of[extra_node.name]).is_success
    check_filter(plugin, added, cluster, table, [*cluster.placed, cluster.extra])

    assert plugin.remove_pod(added, cluster.incoming, extra, info_of[extra_node.name]).is_success
    check_filter(plugin, added, cluster, table, cluster.placed)

    if cluster.placed:
        victim, victim_node = cluster.placed[0]
        removed = state.clone()
        plugin.remove_pod(removed, cluster.incoming, victim, info_of[victim_node.name])
        check_filter(plugin, removed, cluster, table, cluster.placed[1:])
    check_filter(plugin, state, cluster, table, cluster.placed)  # the original is untouched


@SETTINGS
@given(clusters())
def test_score_forms_agree_with_the_reference(cluster: Cluster) -> None:
    plugin, table = setup(cluster)
    state = CycleState()
    status = plugin.pre_score(state, cluster.incoming, table, table.all_rows())
    expected = Reference(cluster, cluster.placed).scores(table_nodes(table))
    if expected is None:
        assert status.is_skip, status
        return
    assert status.is_success, status
    each = score_each_node(plugin, state, cluster.incoming, table)
    assert score_batch(plugin, state, cluster.incoming, table) == each == expected

    scores = np.asarray(each, dtype=np.int64)
    assert plugin.normalize_score(
        state, cluster.incoming, table, table.all_rows(), scores
    ).is_success
    low, high = min(each), max(each)
    for raw, normalized in zip(each, scores.tolist(), strict=True):
        assert 0 <= normalized <= 100
        if high > low:
            assert normalized == int(100.0 * ((raw - low) / (high - low)))
        else:
            assert normalized == 0
