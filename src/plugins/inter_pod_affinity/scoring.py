"""Scoring: weights of matching preferred (and hard) terms summed per topology domain.

For every existing pod P on a node N, in the domain of N for each term's topology key:
- the incoming pod's preferred affinity terms that P matches add their weight, its preferred
  anti-affinity terms that P matches subtract theirs;
- P's required affinity terms that the incoming pod matches add hardPodAffinityWeight;
- P's preferred affinity terms that the incoming pod matches add their weight, P's preferred
  anti-affinity terms subtract theirs.
A node scores the sum over the domains it belongs to; NormalizeScore maps the candidates'
min..max onto 0..100.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from plugins.inter_pod_affinity.domains import DomainHits
from plugins.inter_pod_affinity.domains import DomainIndex
from plugins.inter_pod_affinity.domains import TopologyCounts
from plugins.inter_pod_affinity.terms import NamespaceResolver
from plugins.inter_pod_affinity.terms import PodMatcher
from plugins.inter_pod_affinity.terms import compile_resolved_term
from plugins.inter_pod_affinity.terms import preferred_affinity_terms
from plugins.inter_pod_affinity.terms import preferred_anti_affinity_terms
from plugins.inter_pod_affinity.terms import term_selects
from scheduler.framework import MAX_NODE_SCORE
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import Scores
from scheduler.objects.node import Node
from scheduler.objects.pod_affinity import WeightedAffinityTerm

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"


@dataclass(frozen=True, slots=True)
class PreScoreState:
    domains: DomainIndex
    topology_scores: TopologyCounts

    def clone(self) -> PreScoreState:
        return self  # never changed after PreScore


def has_preferred_terms(pod: Pod) -> bool:
    return bool(preferred_affinity_terms(pod) or preferred_anti_affinity_terms(pod))


def _add_matching(
    hits: DomainHits,
    terms: Iterable[WeightedAffinityTerm],
    pod: Pod,
    namespace_labels: Mapping[str, str],
    row: int,
    *,
    sign: int,
) -> None:
    for weighted in terms:
        if term_selects(weighted.term, pod.namespace, pod.labels, namespace_labels):
            hits.add_weighted(weighted.term.topology_key, row, sign * weighted.weight)


def compute_pre_score_state(
    pod: Pod,
    table: NodeTable,
    resolver: NamespaceResolver,
    namespace_labels: Mapping[str, str],
    hard_pod_affinity_weight: int,
) -> PreScoreState | None:
    """The per-domain scores, or None when no term matched anywhere (nothing to score)."""
    domains = DomainIndex(table)
    hits = DomainHits()
    # The incoming pod's preferred terms: compiled matcher, and where to record its hits.
    own: list[tuple[PodMatcher, list[int], int]] = []
    own_hits: list[tuple[str, list[int], int]] = []
    for sign, terms in (
        (1, preferred_affinity_terms(pod)),
        (-1, preferred_anti_affinity_terms(pod)),
    ):
        for weighted in resolver.resolve_weighted(terms):
            hit_rows: list[int] = []
            own.append((compile_resolved_term(weighted.term), hit_rows, sign * weighted.weight))
            own_hits.append((weighted.term.topology_key, hit_rows, sign * weighted.weight))
    # Without preferred terms of its own, only pods with (anti-)affinity can contribute.
    column = table.pod_count if own else table.affinity_pod_count
    rows = np.flatnonzero(column[: table.size])
    infos = table.node_infos
    for row in rows.tolist():
        info = infos[row]
        node = info.node
        if node is None or not node.labels:
            continue
        for existing in info.pods.values():
            if own:
                namespace, labels = existing.namespace, existing.labels
                for matches, own_rows, _ in own:
                    if matches(namespace, labels):
                        own_rows.append(row)
            existing_affinity = existing.pod_affinity
            if existing_affinity is not None:
                if hard_pod_affinity_weight > 0:
                    for term in existing_affinity.required:
                        if term_selects(term, pod.namespace, pod.labels, namespace_labels):
                            hits.add_weighted(term.topology_key, row, hard_pod_affinity_weight)
                _add_matching(hits, existing_affinity.preferred, pod, namespace_labels, row, sign=1)
            existing_anti = existing.pod_anti_affinity
            if existing_anti is not None:
                _add_matching(hits, existing_anti.preferred, pod, namespace_labels, row, sign=-1)
    for key, own_rows, weight in own_hits:
        hits.add_many(key, own_rows, weight)
    # Upstream records a domain as soon as a term matches there, even if weights cancel out.
    if not hits.lands_in_domain(domains):
        return None
    return PreScoreState(domains, TopologyCounts.from_hits(hits, domains))


def score_node(state: PreScoreState, node: Node) -> int:
    scores = state.topology_scores
    return sum(
        scores.at(key, state.domains.id_for_node(key, node)) for key in scores.topology_keys()
    )


def score_rows(state: PreScoreState, table: NodeTable, rows: Rows) -> Scores:
    total: Scores = np.zeros(len(rows), dtype=np.int64)
    for key in state.topology_scores.topology_keys():
        total += state.topology_scores.gather(key, table.label_ids(key)[0][rows])
    return total


def normalize(scores: Scores) -> None:
    """Map min..max of `scores` onto 0..MAX_NODE_SCORE in place (all 0 when they are equal).

    The arithmetic follows upstream's float64 steps so the truncated results agree exactly.
    """
    if len(scores) == 0:
        return
    low = int(scores.min())
    spread = int(scores.max()) - low
    if spread <= 0:
        scores[:] = 0
        return
    fraction = (scores - low).astype(np.float64) / np.float64(spread)
    scores[:] = (np.float64(MAX_NODE_SCORE) * fraction).astype(np.int64)
