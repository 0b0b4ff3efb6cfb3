"""Hard constraints (DoNotSchedule): PreFilter's counts, Filter, and AddPod/RemovePod.

For each constraint PreFilter counts the matching pods in every eligible domain. A node is
eligible when it carries every constraint's topology key and the constraint's inclusion
policies admit it; its domain then exists even if no matching pod runs there. Filter rejects a
node, constraint by constraint, when the node lacks the topology key (unresolvable) or when
`pods in the node's domain + 1 if the pod matches itself - global minimum > maxSkew`, where the
global minimum is the least count over eligible domains, or 0 while there are fewer eligible
domains than minDomains.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from plugins.pod_topology_spread.constraints import SpreadConstraint
from plugins.pod_topology_spread.constraints import has_all_keys
from plugins.pod_topology_spread.constraints import topology_keys
from plugins.pod_topology_spread.critical_paths import CriticalPaths
from plugins.pod_topology_spread.domain_counts import BoolArray
from plugins.pod_topology_spread.domain_counts import DomainValues
from plugins.pod_topology_spread.domain_counts import Int32Array
from plugins.pod_topology_spread.domain_counts import Int64Array
from plugins.pod_topology_spread.domain_counts import per_domain
from plugins.pod_topology_spread.domain_sums import DomainSums
from plugins.pod_topology_spread.eligibility import NodeInclusion
from plugins.pod_topology_spread.eligibility import RowInclusion
from plugins.pod_topology_spread.pod_counts import MatchingPodCounts
from scheduler.framework import Code
from scheduler.framework import FilterBatch
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import Status

PRE_FILTER_STATE_KEY: Final = "PreFilterPodTopologySpread"

CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
NODE_LABEL_NOT_MATCH: Final = CONSTRAINTS_NOT_MATCH + " (missing required label)"

# Reason ids of the batch form.
_SKEW, _MISSING_LABEL = 0, 1
_REASONS: Final = ((CONSTRAINTS_NOT_MATCH,), (NODE_LABEL_NOT_MATCH,))

Int8Array = npt.NDArray[np.int8]


@dataclass(slots=True)
class HardConstraintCounts:
    """One hard constraint's domains and counts; AddPod/RemovePod change them in place."""

    constraint: SpreadConstraint
    domain_values: DomainValues
    counts: Int64Array
    present: BoolArray
    domains: int
    paths: CriticalPaths
    # 1 when the incoming pod matches the constraint's selector: it will add to its domain.
    self_match: int

    @property
    def global_minimum(self) -> int:
        if self.domains < self.constraint.min_domains:
            return 0
        return self.paths.minimum

    def count_at(self, domain: int) -> int:
        return int(self.counts[domain]) if 0 <= domain < self.domain_values.size else 0

    def add(self, domain: int, delta: int) -> None:
        if not self.present[domain]:
            self.present[domain] = True
            self.domains += 1
        self.counts[domain] += delta
        self.paths.update(domain, int(self.counts[domain]))

    def clone(self) -> HardConstraintCounts:
        return HardConstraintCounts(
            constraint=self.constraint,
            domain_values=self.domain_values,
            counts=self.counts.copy(),
            present=self.present.copy(),
            domains=self.domains,
            paths=self.paths.clone(),
            self_match=self.self_match,
        )


@dataclass(slots=True)
class PreFilterState:
    pod: Pod
    constraints: tuple[SpreadConstraint, ...]
    tallies: list[HardConstraintCounts]
    # Whether the pod's tolerations may compare with Lt and Gt (nodeTaintsPolicy Honor).
    comparisons: bool = False

    def clone(self) -> PreFilterState:
        tallies = [t.clone() for t in self.tallies]
        return PreFilterState(self.pod, self.constraints, tallies, self.comparisons)

    def update_with_pod(self, other: Pod, node: Node | None, delta: int) -> None:
        """Count `other` (delta +1) or stop counting it (-1) as running on `node`.

        As upstream does it: only the namespace is checked (a terminating pod counts), the
        selector is tested as it is (an empty one selects the pod), and a node lacking one of
        the topology keys changes nothing.
        """
        if node is None or other.namespace != self.pod.namespace:
            return
        labels = node.labels
        if not has_all_keys(labels, self.constraints):
            return
        inclusion = NodeInclusion(self.pod, comparisons=self.comparisons)
        for tally in self.tallies:
            constraint = tally.constraint
            if not constraint.selects(other.labels) or not inclusion.includes(constraint, node):
                continue
            domain = tally.domain_values.id_of(labels[constraint.topology_key])
            if domain >= 0:
                tally.add(domain, delta)


def _domains_by_policy(
    ids: Int32Array, eligible: BoolArray, row_counts: Int64Array, size: int
) -> tuple[BoolArray, Int64Array]:
    """Presence and sums over the rows a pod-specific inclusion policy admits."""
    present = per_domain(ids, eligible, None, size) > 0
    return present, per_domain(ids, eligible & (row_counts > 0), row_counts, size)


def compute_pre_filter_state(
    pod: Pod,
    constraints: tuple[SpreadConstraint, ...],
    table: NodeTable,
    domain_sums: DomainSums,
    pod_counts: MatchingPodCounts,
    *,
    comparisons: bool = False,
) -> PreFilterState:
    keys = topology_keys(constraints)
    inclusion = RowInclusion(pod, table, comparisons=comparisons)
    has_keys: BoolArray | None = None
    tallies = []
    for constraint in constraints:
        ids, values = table.label_ids(constraint.topology_key)
        domain_values = DomainValues(values)
        policy = inclusion.mask(constraint)
        if policy is None:
            shared_present, shared_counts = domain_sums.of(
                table, pod.namespace, constraint.selector, constraint.topology_key, keys
            )
            present, counts = shared_present.copy(), shared_counts.copy()
        else:
            if has_keys is None:
                has_keys = np.ones(table.size, dtype=np.bool_)
                for key in keys:
                    has_keys &= table.label_ids(key)[0] >= 0
            row_counts = pod_counts.per_row(table, pod.namespace, constraint.selector)
            present, counts = _domains_by_policy(
                ids, has_keys & policy, row_counts, domain_values.size
            )
        domains = np.flatnonzero(present)
        tallies.append(
            HardConstraintCounts(
                constraint=constraint,
                domain_values=domain_values,
                counts=counts,
                present=present,
                domains=len(domains),
                paths=CriticalPaths.of(domains, counts[domains]),
                self_match=int(constraint.selects(pod.labels)),
            )
        )
    return PreFilterState(pod, constraints, tallies, comparisons)


def filter_node(state: PreFilterState, node: Node) -> Status:
    labels = node.labels
    for tally in state.tallies:
        constraint = tally.constraint
        value = labels.get(constraint.topology_key)
        if value is None:
            return Status.unresolvable(NODE_LABEL_NOT_MATCH)
        matching = tally.count_at(tally.domain_values.id_of(value))
        if matching + tally.self_match - tally.global_minimum > constraint.max_skew:
            return Status.unschedulable(CONSTRAINTS_NOT_MATCH)
    return Status()


def _verdicts(tally: HardConstraintCounts, values: int) -> tuple[Int8Array, Int32Array]:
    """Code and reason id per domain of the key's `values` domains, plus a last slot for
    nodes missing the label. Domains the table learnt after PreFilter read 0 pods."""
    known = tally.domain_values.size
    counts = tally.counts[:known]
    if values > known:
        counts = np.concatenate([counts, np.zeros(values - known, dtype=np.int64)])
    limit = tally.constraint.max_skew + tally.global_minimum - tally.self_match
    codes = np.empty(values + 1, dtype=np.int8)
    codes[:-1] = np.where(counts > limit, int(Code.UNSCHEDULABLE), 0)
    codes[-1] = int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    reason_ids = np.full(values + 1, _SKEW, dtype=np.int32)
    reason_ids[-1] = _MISSING_LABEL
    return codes, reason_ids


def filter_rows(state: PreFilterState, table: NodeTable, rows: Rows) -> FilterBatch:
    """Each constraint decides per domain once; rows gather their domain's verdict, and the
    first constraint that rejects a row gives its status."""
    codes: Int8Array | None = None
    reason_ids: Int32Array | None = None
    for tally in state.tallies:
        column, values = table.label_ids(tally.constraint.topology_key)
        ids = column[rows].astype(np.intp)
        domain_codes, domain_reasons = _verdicts(tally, len(values))
        row_codes = domain_codes[ids]
        row_reasons = domain_reasons[ids]
        if codes is None or reason_ids is None:
            codes, reason_ids = row_codes, row_reasons
            continue
        undecided = codes == 0
        codes = np.where(undecided, row_codes, codes)
        reason_ids = np.where(undecided, row_reasons, reason_ids)
    if codes is None or reason_ids is None:
        return FilterBatch.all_pass(len(rows))
    return FilterBatch(codes, _REASONS, reason_ids)
