"""NodeAffinity: nodeSelector, required and preferred node affinity, plus the profile's
addedAffinity."""

from __future__ import annotations

import numpy as np

from plugins.helpers import DefaultNormalizer
from plugins.helpers import RequiredNodeAffinity
from plugins.helpers import filter_on_node
from plugins.helpers import match_node_selector
from plugins.helpers import preferred_score
from plugins.helpers import preferred_scores
from plugins.helpers import score_on_node
from plugins.helpers.signatures import NODE_AFFINITY
from plugins.helpers.signatures import NODE_SELECTOR
from plugins.helpers.signatures import sorted_items
from plugins.node_affinity.args import NodeAffinityArgs
from plugins.node_affinity.hints import node_change_hint
from plugins.node_affinity.state import PRE_FILTER_STATE_KEY
from plugins.node_affinity.state import PRE_SCORE_STATE_KEY
from plugins.node_affinity.state import PreFilterState
from plugins.node_affinity.state import PreScoreState
from plugins.node_affinity.state import pod_preferred_terms
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterBatch
from scheduler.framework import Handle
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PreFilterExtensions
from scheduler.framework import PreFilterResult
from scheduler.framework import Rows
from scheduler.framework import Scores
from scheduler.framework import SignFragments
from scheduler.framework import Status
from scheduler.objects.node_selector import NodeSelector

REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"

_NAME_FIELD = "metadata.name"


def _named_nodes(required: NodeSelector) -> frozenset[str] | None:
    """Nodes the required terms name through `metadata.name In`, or None if not all do.

    Terms are ORed, so one term without a name requirement leaves every node possible;
    requirements within a term are ANDed, so their name sets intersect.
    """
    names: set[str] = set()
    for term in required.terms:
        term_names: frozenset[str] | None = None
        for requirement in term.match_fields:
            if requirement.key == _NAME_FIELD and requirement.operator == "In":
                values = requirement.values
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


class NodeAffinity:
    name = "NodeAffinity"

    def __init__(self, args: NodeAffinityArgs | None, handle: Handle) -> None:
        del handle
        added = (args or NodeAffinityArgs()).node_affinity()
        self._added_required: NodeSelector | None = added.required if added else None
        self._added_preferred = added.preferred if added else ()
        self._normalizer = DefaultNormalizer(reverse=False)

    # ---- PreFilter / Filter ---------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        required = RequiredNodeAffinity.of_pod(pod)
        if required.is_empty and self._added_required is None:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(required))
        if required.required is None or not required.required.terms:
            return None, SUCCESS
        names = _named_nodes(required.required)
        if names is None:
            return None, SUCCESS
        if not names:
            return None, Status.unresolvable(REASON_CONFLICT)
        return PreFilterResult(names), SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        # The state depends on the pod alone, not on other pods.
        return None

    def _required(self, state: CycleState, pod: Pod) -> RequiredNodeAffinity:
        found = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if found is not None:
            return found.required
        # PreFilter did not run (disabled at that point): compile the same value here.
        return RequiredNodeAffinity.of_pod(pod)

    @filter_on_node
    def filter(self, state: CycleState, pod: Pod, node: Node) -> Status:
        added = self._added_required
        if added is not None and not added.matches(node.labels, node.name):
            return Status.unresolvable(REASON_ENFORCED)
        if not self._required(state, pod).matches(node):
            return Status.unresolvable(REASON_POD)
        return SUCCESS

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        pod_fails = ~self._required(state, pod).match_rows(table)[rows]
        if self._added_required is None:
            return FilterBatch.reject_where(
                pod_fails, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_POD
            )
        added_fails = ~match_node_selector(table, self._added_required)[rows]
        rejected = added_fails | pod_fails
        codes = np.where(rejected, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 0).astype(np.int8)
        # The profile's constraint is checked first, so it names the reason where both fail.
        reason_ids = np.where(added_fails, 0, 1).astype(np.int32)
        return FilterBatch(codes, ((REASON_ENFORCED,), (REASON_POD,)), reason_ids)

    # ---- PreScore / Score -----------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        preferred = pod_preferred_terms(pod)
        if not preferred and not self._added_preferred:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(preferred))
        return SUCCESS

    def _preferred(self, state: CycleState, pod: Pod) -> PreScoreState:
        found = state.get(PRE_SCORE_STATE_KEY, PreScoreState)
        return found if found is not None else PreScoreState(pod_preferred_terms(pod))

    @score_on_node
    def score(self, state: CycleState, pod: Pod, node: Node) -> tuple[int, Status]:
        pod_terms = self._preferred(state, pod).preferred
        total = preferred_score(self._added_preferred, node) + preferred_score(pod_terms, node)
        return total, SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        pod_terms = self._preferred(state, pod).preferred
        totals = preferred_scores(table, self._added_preferred) + preferred_scores(table, pod_terms)
        scores: Scores = totals[rows]
        return scores

    def score_extensions(self) -> DefaultNormalizer:
        return self._normalizer

    # ---- Signature ------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # The profile's addedAffinity is the same for every pod; the pod's own part is its
        # nodeSelector and its node affinity (parsed, and compared by value).
        return {NODE_AFFINITY: pod.node_affinity, NODE_SELECTOR: sorted_items(pod.node_selector)}

    # ---- QueueingHints --------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                node_change_hint(self._added_required),
            )
        ]
