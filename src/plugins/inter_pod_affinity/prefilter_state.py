"""What PreFilter computes for Filter: counts of matching pods per topology domain.

Three tallies, as upstream keeps them:
- affinity: existing pods matching *all* the incoming pod's required affinity terms, counted
  once per term in the domain of each term's topology key;
- anti-affinity: existing pods matching each of the incoming pod's required anti-affinity terms;
- existing anti-affinity: required anti-affinity terms of existing pods that match the incoming
  pod (the symmetric rule: an existing pod that repels the incoming pod repels it from its
  whole domain).
AddPod/RemovePod move the same tallies by +1/-1 for one pod, for preemption and nominated pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from plugins.inter_pod_affinity.domains import DomainIndex
from plugins.inter_pod_affinity.domains import RowSums
from plugins.inter_pod_affinity.domains import TopologyCounts
from plugins.inter_pod_affinity.pod_tallies import ExistingTermIndex
from plugins.inter_pod_affinity.pod_tallies import IncomingTermTallies
from plugins.inter_pod_affinity.pod_tallies import Role
from plugins.inter_pod_affinity.pod_tallies import term_key
from plugins.inter_pod_affinity.terms import NO_LABELS
from plugins.inter_pod_affinity.terms import NamespaceResolver
from plugins.inter_pod_affinity.terms import compile_all_terms
from plugins.inter_pod_affinity.terms import compile_resolved_term
from plugins.inter_pod_affinity.terms import matches_all_terms
from plugins.inter_pod_affinity.terms import required_affinity_terms
from plugins.inter_pod_affinity.terms import required_anti_affinity_terms
from plugins.inter_pod_affinity.terms import term_selects
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.objects.node import Node
from scheduler.objects.pod_affinity import AffinityTerm

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"


@dataclass(slots=True)
class PreFilterState:
    pod: Pod
    # The incoming pod's required terms, namespace selectors already unrolled.
    affinity_terms: tuple[AffinityTerm, ...]
    anti_affinity_terms: tuple[AffinityTerm, ...]
    # Labels of the incoming pod's namespace, for existing pods' namespace selectors.
    namespace_labels: Mapping[str, str]
    domains: DomainIndex
    affinity_counts: TopologyCounts
    anti_affinity_counts: TopologyCounts
    existing_anti_affinity_counts: TopologyCounts
    # Whether the incoming pod matches all of its own affinity terms (the first pod of a group).
    matches_own_affinity: bool

    def clone(self) -> PreFilterState:
        return PreFilterState(
            pod=self.pod,
            affinity_terms=self.affinity_terms,
            anti_affinity_terms=self.anti_affinity_terms,
            namespace_labels=self.namespace_labels,
            domains=self.domains,
            affinity_counts=self.affinity_counts.clone(),
            anti_affinity_counts=self.anti_affinity_counts.clone(),
            existing_anti_affinity_counts=self.existing_anti_affinity_counts.clone(),
            matches_own_affinity=self.matches_own_affinity,
        )

    def update_with_pod(self, other: Pod, node: Node, delta: int) -> None:
        """Account `other` (delta=+1) or forget it (delta=-1) as running on `node`."""
        domains = self.domains
        for term in required_anti_affinity_terms(other):
            if term_selects(term, self.pod.namespace, self.pod.labels, self.namespace_labels):
                key = term.topology_key
                self.existing_anti_affinity_counts.add(
                    key, domains.id_for_node(key, node), delta, domains
                )
        if matches_all_terms(self.affinity_terms, other):
            for term in self.affinity_terms:
                key = term.topology_key
                self.affinity_counts.add(key, domains.id_for_node(key, node), delta, domains)
        for term in self.anti_affinity_terms:
            if term.matches_pod(other.namespace, other.labels, NO_LABELS):
                key = term.topology_key
                self.anti_affinity_counts.add(key, domains.id_for_node(key, node), delta, domains)


def has_required_terms(pod: Pod) -> bool:
    return bool(required_affinity_terms(pod) or required_anti_affinity_terms(pod))


def count_existing_anti_affinity(
    pod: Pod, namespace_labels: Mapping[str, str], table: NodeTable, index: ExistingTermIndex
) -> RowSums:
    """Per row, the required anti-affinity terms of existing pods that match `pod`, per term
    key: each distinct term is tested against `pod` once."""
    rows = RowSums()
    namespace, labels = pod.namespace, pod.labels
    for existing in index.terms(table, Role.REQUIRED_ANTI_AFFINITY):
        if term_selects(existing.term, namespace, labels, namespace_labels):
            rows.add(existing.term.topology_key, existing.counts, 1)
    return rows


def count_incoming_terms(
    affinity_terms: tuple[AffinityTerm, ...],
    anti_affinity_terms: tuple[AffinityTerm, ...],
    table: NodeTable,
    tallies: IncomingTermTallies,
) -> tuple[RowSums, RowSums]:
    """Per row, the existing pods matching the incoming pod's required (anti-)affinity terms."""
    affinity = RowSums()
    anti = RowSums()
    if affinity_terms:
        # A pod matching all affinity terms counts once for each term, in that term's domain.
        matching_all = tallies.per_row(
            table,
            ("all", tuple(term_key(term) for term in affinity_terms)),
            lambda: compile_all_terms(affinity_terms),
        )
        for term in affinity_terms:
            affinity.add(term.topology_key, matching_all, 1)
    for term in anti_affinity_terms:
        matching = tallies.per_row(
            table, ("one", term_key(term)), partial(compile_resolved_term, term)
        )
        anti.add(term.topology_key, matching, 1)
    return affinity, anti


def compute_pre_filter_state(
    pod: Pod,
    table: NodeTable,
    resolver: NamespaceResolver,
    namespace_labels: Mapping[str, str],
    tallies: IncomingTermTallies,
    index: ExistingTermIndex,
) -> PreFilterState:
    domains = DomainIndex(table)
    affinity_terms = resolver.resolve_all(required_affinity_terms(pod))
    anti_affinity_terms = resolver.resolve_all(required_anti_affinity_terms(pod))
    existing = count_existing_anti_affinity(pod, namespace_labels, table, index)
    affinity, anti = count_incoming_terms(affinity_terms, anti_affinity_terms, table, tallies)
    return PreFilterState(
        pod=pod,
        affinity_terms=affinity_terms,
        anti_affinity_terms=anti_affinity_terms,
        namespace_labels=namespace_labels,
        domains=domains,
        affinity_counts=TopologyCounts.from_row_sums(affinity, domains),
        anti_affinity_counts=TopologyCounts.from_row_sums(anti, domains),
        existing_anti_affinity_counts=TopologyCounts.from_row_sums(existing, domains),
        matches_own_affinity=matches_all_terms(affinity_terms, pod),
    )
