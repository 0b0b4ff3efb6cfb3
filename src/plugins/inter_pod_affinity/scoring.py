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

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from plugins.inter_pod_affinity.domains import DomainIndex
from plugins.inter_pod_affinity.domains import RowSums
from plugins.inter_pod_affinity.domains import TopologyCounts
from plugins.inter_pod_affinity.pod_tallies import ExistingTermIndex
from plugins.inter_pod_affinity.pod_tallies import IncomingTermTallies
from plugins.inter_pod_affinity.pod_tallies import Role
from plugins.inter_pod_affinity.pod_tallies import term_key
from plugins.inter_pod_affinity.terms import NamespaceResolver
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

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"


@dataclass(frozen=True, slots=True)
class PreScoreState:
    domains: DomainIndex
    topology_scores: TopologyCounts

    def clone(self) -> PreScoreState:
        return self  # never changed after PreScore


def has_preferred_terms(pod: Pod) -> bool:
    return bool(preferred_affinity_terms(pod) or preferred_anti_affinity_terms(pod))


_EXISTING_SIGNS = (
    (Role.PREFERRED_AFFINITY, 1),
    (Role.PREFERRED_ANTI_AFFINITY, -1),
)


def compute_pre_score_state(
    pod: Pod,
    table: NodeTable,
    resolver: NamespaceResolver,
    namespace_labels: Mapping[str, str],
    hard_pod_affinity_weight: int,
    tallies: IncomingTermTallies,
    index: ExistingTermIndex,
) -> PreScoreState | None:
    """The per-domain scores, or None when no term matched anywhere (nothing to score)."""
    domains = DomainIndex(table)
    rows = RowSums()
    # The incoming pod's preferred terms, against every existing pod.
    for sign, terms in (
        (1, preferred_affinity_terms(pod)),
        (-1, preferred_anti_affinity_terms(pod)),
    ):
        for weighted in resolver.resolve_weighted(terms):
            term = weighted.term
            matching = tallies.per_row(
                table, ("one", term_key(term)), partial(compile_resolved_term, term)
            )
            rows.add(term.topology_key, matching, sign * weighted.weight)
    # Existing pods' terms that select the incoming pod: each distinct term tested once.
    namespace, labels = pod.namespace, pod.labels
    if hard_pod_affinity_weight > 0:
        for existing in index.terms(table, Role.REQUIRED_AFFINITY):
            if term_selects(existing.term, namespace, labels, namespace_labels):
                rows.add(existing.term.topology_key, existing.counts, hard_pod_affinity_weight)
    for role, sign in _EXISTING_SIGNS:
        for existing in index.terms(table, role):
            if term_selects(existing.term, namespace, labels, namespace_labels):
                rows.add(existing.term.topology_key, existing.counts, sign * existing.weight)
    # Upstream records a domain as soon as a term matches there, even if weights cancel out.
    if not rows.lands_in_domain(domains):
        return None
    return PreScoreState(domains, TopologyCounts.from_row_sums(rows, domains))


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
