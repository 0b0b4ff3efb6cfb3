"""Filter: the three required rules, per node and over many rows at once.

Checked in upstream's order, the first failing rule names the reason:
1. the incoming pod's required affinity (UnschedulableAndUnresolvable: evicting pods cannot
   create a matching pod);
2. the incoming pod's required anti-affinity (Unschedulable: preemption may remove the pods);
3. existing pods' required anti-affinity against the incoming pod (Unschedulable).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from plugins.inter_pod_affinity.domains import ABSENT
from plugins.inter_pod_affinity.prefilter_state import PreFilterState
from scheduler.framework import Code
from scheduler.framework import FilterBatch
from scheduler.framework import NodeTable
from scheduler.framework import Rows
from scheduler.framework import Status
from scheduler.objects.node import Node

AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"

BoolArray = npt.NDArray[np.bool_]

# Reason index in the batch result, in the order the rules are checked.
_AFFINITY, _ANTI_AFFINITY, _EXISTING = 0, 1, 2
_BATCH_REASONS = (
    (AFFINITY_RULES_NOT_MATCH,),
    (ANTI_AFFINITY_RULES_NOT_MATCH,),
    (EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,),
)
_CODES = (
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    Code.UNSCHEDULABLE,
    Code.UNSCHEDULABLE,
)


# ---- one node ------------------------------------------------------------------------------


def _satisfies_affinity(state: PreFilterState, node: Node) -> bool:
    pods_exist = True
    for term in state.affinity_terms:
        value_id = state.domains.id_for_node(term.topology_key, node)
        if value_id == ABSENT:
            return False  # every topology key must be present on the node
        if state.affinity_counts.at(term.topology_key, value_id) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group whose affinity selects the group itself: when no pod anywhere
    # matches, a pod that matches its own terms may go to any node with the topology keys.
    return state.affinity_counts.empty and state.matches_own_affinity


def _satisfies_anti_affinity(state: PreFilterState, node: Node) -> bool:
    if state.anti_affinity_counts.empty:
        return True
    for term in state.anti_affinity_terms:
        key = term.topology_key
        if state.anti_affinity_counts.at(key, state.domains.id_for_node(key, node)) > 0:
            return False
    return True


def _satisfies_existing_anti_affinity(state: PreFilterState, node: Node) -> bool:
    counts = state.existing_anti_affinity_counts
    if counts.empty:
        return True
    return all(
        counts.at(key, state.domains.id_for_node(key, node)) <= 0 for key in counts.topology_keys()
    )


def filter_node(state: PreFilterState, node: Node) -> Status:
    if not _satisfies_affinity(state, node):
        return Status(_CODES[_AFFINITY], *_BATCH_REASONS[_AFFINITY])
    if not _satisfies_anti_affinity(state, node):
        return Status(_CODES[_ANTI_AFFINITY], *_BATCH_REASONS[_ANTI_AFFINITY])
    if not _satisfies_existing_anti_affinity(state, node):
        return Status(_CODES[_EXISTING], *_BATCH_REASONS[_EXISTING])
    return Status()


# ---- many rows -----------------------------------------------------------------------------


def _affinity_fails(state: PreFilterState, table: NodeTable, rows: Rows) -> BoolArray | None:
    if not state.affinity_terms:
        return None
    missing_key = np.zeros(len(rows), dtype=np.bool_)
    pods_exist = np.ones(len(rows), dtype=np.bool_)
    for term in state.affinity_terms:
        ids = table.label_ids(term.topology_key)[0][rows]
        missing_key |= ids < 0
        pods_exist &= state.affinity_counts.gather(term.topology_key, ids) > 0
    first_of_group = state.affinity_counts.empty and state.matches_own_affinity
    if first_of_group:
        return missing_key
    fails: BoolArray = missing_key | ~pods_exist
    return fails


def _anti_affinity_fails(state: PreFilterState, table: NodeTable, rows: Rows) -> BoolArray | None:
    if state.anti_affinity_counts.empty:
        return None
    fails = np.zeros(len(rows), dtype=np.bool_)
    for key in {term.topology_key for term in state.anti_affinity_terms}:
        ids = table.label_ids(key)[0][rows]
        fails |= state.anti_affinity_counts.gather(key, ids) > 0
    return fails


def _existing_anti_affinity_fails(
    state: PreFilterState, table: NodeTable, rows: Rows
) -> BoolArray | None:
    counts = state.existing_anti_affinity_counts
    if counts.empty:
        return None
    fails = np.zeros(len(rows), dtype=np.bool_)
    for key in counts.topology_keys():
        ids = table.label_ids(key)[0][rows]
        fails |= counts.gather(key, ids) > 0
    return fails


def filter_rows(state: PreFilterState, table: NodeTable, rows: Rows) -> FilterBatch:
    checks = (
        _affinity_fails(state, table, rows),
        _anti_affinity_fails(state, table, rows),
        _existing_anti_affinity_fails(state, table, rows),
    )
    codes = np.zeros(len(rows), dtype=np.int8)
    reason_ids = np.zeros(len(rows), dtype=np.int32)
    undecided = np.ones(len(rows), dtype=np.bool_)
    for index, fails in enumerate(checks):
        if fails is None:
            continue
        hit = fails & undecided
        codes[hit] = _CODES[index]
        reason_ids[hit] = index
        undecided &= ~hit
    return FilterBatch(codes, _BATCH_REASONS, reason_ids)
