"""Soft constraints (ScheduleAnyway): PreScore's counts, Score and NormalizeScore.

A node's raw score is, over the constraints whose topology key it carries,
`matching pods in its domain x log(domains + 2) + (maxSkew - 1)`, summed in constraint order
as float64 and rounded half away from zero. For `kubernetes.io/hostname` the count is the pods
on the node itself and "domains" the number of scored nodes; for other keys the count covers
eligible nodes (inclusion policies) of the domains that some scored node belongs to. Scored
nodes lacking a topology key are ignored (score 0) unless the constraints are the system
defaults, which spread by hostname even where nodes have no zone label. NormalizeScore reverses
the scale: fewer matching pods score higher, 100 for the least populated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from plugins.pod_topology_spread.constraints import SpreadConstraint
from plugins.pod_topology_spread.constraints import has_all_keys
from plugins.pod_topology_spread.constraints import topology_keys
from plugins.pod_topology_spread.domain_counts import BoolArray
from plugins.pod_topology_spread.domain_counts import DomainValues
from plugins.pod_topology_spread.domain_counts import Int32Array
from plugins.pod_topology_spread.domain_counts import Int64Array
from plugins.pod_topology_spread.domain_sums import DomainSums
from plugins.pod_topology_spread.eligibility import RowInclusion
from plugins.pod_topology_spread.pod_counts import MatchingPodCounts
from plugins.pod_topology_spread.pod_counts import compile_selector
from plugins.pod_topology_spread.pod_counts import count_matching
from scheduler.framework import MAX_NODE_SCORE
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import Scores

PRE_SCORE_STATE_KEY: Final = "PreScorePodTopologySpread"

Float64Array = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class SoftConstraintCounts:
    constraint: SpreadConstraint
    domain_values: DomainValues
    # ln(domains + 2): counts of small topologies are not watered down by large ones.
    weight: float
    # Hostname constraints: matching pods per row. Others: per domain slot, the last slot 0.
    counts: Int64Array
    # Others only: each domain's term of the raw score, the last slot 0.0 (label missing).
    terms: Float64Array | None


@dataclass(frozen=True, slots=True)
class PreScoreState:
    pod: Pod
    require_all_keys: bool
    # Over every row of the table: scored rows that are ignored (score 0); None if none is.
    ignored: BoolArray | None
    tallies: tuple[SoftConstraintCounts, ...]

    def clone(self) -> PreScoreState:
        return self  # never changed after PreScore

    @property
    def constraints(self) -> tuple[SpreadConstraint, ...]:
        return tuple(t.constraint for t in self.tallies)


def _rows_with_keys(table: NodeTable, keys: tuple[str, ...]) -> BoolArray:
    result: BoolArray = table.label_ids(keys[0])[0] >= 0
    for key in keys[1:]:
        result = result & (table.label_ids(key)[0] >= 0)
    return result


def _distinct_domains(ids: Int32Array, rows: Rows, size: int) -> int:
    seen = np.zeros(size + 1, dtype=np.bool_)
    seen[ids[rows]] = True
    seen[-1] = False  # rows lacking the key
    return int(np.count_nonzero(seen))


def _counts_over_rows(
    ids: Int32Array,
    domain_values: DomainValues,
    scored: Rows,
    eligible: BoolArray | None,
    row_counts: Int64Array,
    require_all_keys: bool,
) -> tuple[Int64Array, int]:
    """Per-domain counts and the number of domains, row by row (inclusion policies, or nodes
    lacking the key under the system defaults)."""
    size = domain_values.size
    slots = size + 2  # the values, a slot for "" when no node has it, the 0 slot
    domain_of_row = ids.astype(np.intp)
    if not require_all_keys:
        # A missing label reads as "" when upstream looks it up, so such nodes join the
        # domain of the value "".
        empty = domain_values.id_of("")
        domain_of_row = np.where(ids >= 0, domain_of_row, empty if empty >= 0 else size)
    registered = np.zeros(slots, dtype=np.bool_)
    registered[domain_of_row[scored]] = True
    registered[-1] = False
    counted = registered[domain_of_row] & (row_counts > 0)
    if eligible is not None:
        counted &= eligible
    counts = np.bincount(
        domain_of_row[counted], weights=row_counts[counted], minlength=slots
    ).astype(np.int64)
    return counts, int(np.count_nonzero(registered))


def compute_pre_score_state(
    pod: Pod,
    constraints: tuple[SpreadConstraint, ...],
    table: NodeTable,
    rows: Rows,
    require_all_keys: bool,
    pod_counts: MatchingPodCounts,
    domain_sums: DomainSums,
    *,
    comparisons: bool = False,
) -> PreScoreState:
    size = table.size
    keys = topology_keys(constraints)
    # Rows handed to PreScore are distinct, so as many as the table means every row.
    every_row = len(rows) == size
    ignored: BoolArray | None = None
    has_keys: BoolArray | None = None
    scored = rows
    if require_all_keys:
        has_keys = _rows_with_keys(table, keys)
        lacking = ~has_keys[rows]
        if lacking.any():
            ignored = np.zeros(size, dtype=np.bool_)
            ignored[rows[lacking]] = True
            scored = rows[~lacking]
    inclusion = RowInclusion(pod, table, comparisons=comparisons)
    tallies = []
    for constraint in constraints:
        key = constraint.topology_key
        ids, values = table.label_ids(key)
        domain_values = DomainValues(values)
        if constraint.is_hostname:
            row_counts = pod_counts.per_row(table, pod.namespace, constraint.selector)
            weight = math.log(len(scored) + 2)
            tallies.append(
                SoftConstraintCounts(constraint, domain_values, weight, row_counts, None)
            )
            continue
        policy = inclusion.mask(constraint)
        required = keys if require_all_keys else (key,)
        if policy is None and (require_all_keys or not (ids < 0).any()):
            # Eligible nodes are exactly those carrying the required keys: shared sums serve.
            present, counts = domain_sums.of(
                table, pod.namespace, constraint.selector, key, required
            )
            domains = (
                int(np.count_nonzero(present))
                if every_row
                else _distinct_domains(ids, scored, domain_values.size)
            )
        else:
            eligible = policy
            if has_keys is not None:
                eligible = has_keys if eligible is None else eligible & has_keys
            row_counts = pod_counts.per_row(table, pod.namespace, constraint.selector)
            counts, domains = _counts_over_rows(
                ids, domain_values, scored, eligible, row_counts, require_all_keys
            )
        weight = math.log(domains + 2)
        terms = counts.astype(np.float64) * weight + float(constraint.max_skew - 1)
        terms[-1] = 0.0
        tallies.append(SoftConstraintCounts(constraint, domain_values, weight, counts, terms))
    return PreScoreState(pod, require_all_keys, ignored, tuple(tallies))


def round_half_away(value: float) -> int:
    """Round to the nearest integer, halves away from zero (Go's math.Round)."""
    magnitude = abs(value)
    whole = math.floor(magnitude)
    rounded = whole + (1 if magnitude - whole >= 0.5 else 0)
    return int(rounded if value >= 0 else -rounded)


def _round_half_away(values: Float64Array) -> Scores:
    if len(values) and values.min() < 0:
        magnitude = np.abs(values)
        whole = np.floor(magnitude)
        rounded = whole + (magnitude - whole >= 0.5)
        signed: Scores = np.where(values >= 0, rounded, -rounded).astype(np.int64)
        return signed
    whole = np.floor(values)
    result: Scores = (whole + (values - whole >= 0.5)).astype(np.int64)
    return result


def score_node(state: PreScoreState, node_info: NodeInfo) -> int:
    node = node_info.node
    if node is None:
        return 0
    labels = node.labels
    if state.require_all_keys and not has_all_keys(labels, state.constraints):
        return 0
    total = 0.0
    pod = state.pod
    for tally in state.tallies:
        constraint = tally.constraint
        value = labels.get(constraint.topology_key)
        if value is None:
            continue
        if tally.terms is None:  # hostname: the node's own pods
            selector = constraint.selector
            count = 0
            if selector is not None and constraint.counts_existing_pods:
                count = count_matching(
                    node_info.pods.values(), pod.namespace, compile_selector(selector)
                )
            total += float(count) * tally.weight + float(constraint.max_skew - 1)
            continue
        domain = tally.domain_values.id_of(value)
        if domain >= 0:
            total += float(tally.terms[domain])
    return round_half_away(total)


def score_rows(state: PreScoreState, table: NodeTable, rows: Rows) -> Scores:
    total = np.zeros(len(rows), dtype=np.float64)
    for tally in state.tallies:
        constraint = tally.constraint
        column, values = table.label_ids(constraint.topology_key)
        ids = column[rows].astype(np.intp)
        if tally.terms is None:  # hostname: the node's own pods
            terms = tally.counts[rows].astype(np.float64) * tally.weight + float(
                constraint.max_skew - 1
            )
            total = total + np.where(ids >= 0, terms, 0.0)
            continue
        if len(values) > tally.domain_values.size:
            # Values the table learnt after PreScore belong to no scored node: read 0.
            ids = np.where(ids < tally.domain_values.size, ids, -1)
        total = total + tally.terms[ids]
    scores = _round_half_away(total)
    if state.ignored is not None:
        scores[state.ignored[rows]] = 0
    return scores


def normalize(state: PreScoreState, rows: Rows, scores: Scores) -> None:
    """Reverse the scale in place: 100 x (max + min - score) // max; ignored rows get 0."""
    ignored = None if state.ignored is None else state.ignored[rows]
    considered = scores if ignored is None else scores[~ignored]
    if len(considered):
        lowest = int(considered.min())
        highest = max(int(considered.max()), 0)
    else:
        lowest, highest = 0, 0
    if highest == 0:
        normalized = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
    else:
        normalized = MAX_NODE_SCORE * (highest + lowest - scores) // highest
    if ignored is not None:
        normalized[ignored] = 0
    scores[:] = normalized
