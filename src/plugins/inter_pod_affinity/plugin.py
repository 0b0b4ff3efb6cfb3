"""InterPodAffinity: places pods relative to other pods by topology domain."""

from __future__ import annotations

from collections.abc import Mapping

from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from plugins.helpers.pod_count_extensions import PodCountExtensions
from plugins.helpers.score_state import pre_score_state
from plugins.helpers.signatures import LABELS
from plugins.helpers.signatures import NAMESPACE
from plugins.helpers.signatures import sorted_items
from plugins.inter_pod_affinity.args import InterPodAffinityArgs
from plugins.inter_pod_affinity.filter import filter_node
from plugins.inter_pod_affinity.filter import filter_rows
from plugins.inter_pod_affinity.hints import AffinityHints
from plugins.inter_pod_affinity.pod_tallies import ExistingTermIndex
from plugins.inter_pod_affinity.pod_tallies import IncomingTermTallies
from plugins.inter_pod_affinity.prefilter_state import PRE_FILTER_STATE_KEY
from plugins.inter_pod_affinity.prefilter_state import PreFilterState
from plugins.inter_pod_affinity.prefilter_state import compute_pre_filter_state
from plugins.inter_pod_affinity.prefilter_state import has_required_terms
from plugins.inter_pod_affinity.scoring import PRE_SCORE_STATE_KEY
from plugins.inter_pod_affinity.scoring import PreScoreState
from plugins.inter_pod_affinity.scoring import compute_pre_score_state
from plugins.inter_pod_affinity.scoring import has_preferred_terms
from plugins.inter_pod_affinity.scoring import normalize
from plugins.inter_pod_affinity.scoring import score_node
from plugins.inter_pod_affinity.scoring import score_rows
from plugins.inter_pod_affinity.terms import NAMESPACES
from plugins.inter_pod_affinity.terms import NamespaceResolver
from plugins.inter_pod_affinity.terms import namespace_labels
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import CycleState
from scheduler.framework import FilterBatch
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PreFilterResult
from scheduler.framework import Rows
from scheduler.framework import Scores
from scheduler.framework import SignFragments
from scheduler.framework import Status

NAME = "InterPodAffinity"


class InterPodAffinity(PodCountExtensions):
    """Required pod (anti-)affinity in Filter, preferred terms in Score."""

    name = NAME

    def __init__(self, args: InterPodAffinityArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else InterPodAffinityArgs()
        self._handle = handle
        self._hints = AffinityHints(handle)
        # Existing pods tallied per row, kept across cycles (refreshed where pods changed).
        self._tallies = IncomingTermTallies()
        self._existing_terms = ExistingTermIndex()

    @property
    def args(self) -> InterPodAffinityArgs:
        return self._args

    def _namespaces(self, pod: Pod) -> tuple[NamespaceResolver, Mapping[str, str]]:
        """What the pod's terms are matched with: a resolver of their namespace selectors, and
        the labels of the pod's own namespace (existing pods' selectors are matched on them)."""
        lister = self._handle.lister(NAMESPACES)
        return NamespaceResolver(lister), namespace_labels(lister, pod.namespace)

    # ---- PreFilter -------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        # Fast path: with no required terms of its own and no pod anywhere carrying required
        # anti-affinity, nothing this plugin checks can reject the pod.
        if not has_required_terms(pod) and not table.anti_affinity_pods:
            return None, Status.skip()
        resolver, own_labels = self._namespaces(pod)
        computed = compute_pre_filter_state(
            pod, table, resolver, own_labels, self._tallies, self._existing_terms
        )
        if (
            computed.existing_anti_affinity_counts.empty
            and not computed.affinity_terms
            and not computed.anti_affinity_terms
        ):
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, computed)
        return None, SUCCESS

    def _count_pod(self, state: CycleState, other: Pod, node_info: NodeInfo, delta: int) -> Status:
        computed = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if computed is None:
            return Status.missing_state(PRE_FILTER_STATE_KEY)
        if node_info.node is not None:
            computed.update_with_pod(other, node_info.node, delta)
        return SUCCESS

    # ---- Filter ----------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        computed = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if computed is None:
            return Status.missing_state(PRE_FILTER_STATE_KEY)
        if node_info.node is None:
            return Status.from_error(NODE_NOT_FOUND_MESSAGE)
        return filter_node(computed, node_info.node)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        computed = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if computed is None:
            return FilterBatch.uniform(Status.missing_state(PRE_FILTER_STATE_KEY), len(rows))
        return filter_rows(computed, table, rows)

    # ---- Score -----------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        if not has_preferred_terms(pod) and (
            self._args.ignore_preferred_terms_of_existing_pods or not table.affinity_pods
        ):
            # No term of its own, and none of existing pods to consider: nothing can score.
            return Status.skip()
        resolver, own_labels = self._namespaces(pod)
        computed = compute_pre_score_state(
            pod,
            table,
            resolver,
            own_labels,
            self._args.hard_pod_affinity_weight,
            self._tallies,
            self._existing_terms,
        )
        if computed is None:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, computed)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        computed = state.get(PRE_SCORE_STATE_KEY, PreScoreState)
        if computed is None:
            return 0, Status.missing_state(PRE_SCORE_STATE_KEY)
        if node_info.node is None:
            return 0, Status.from_error(NODE_NOT_FOUND_MESSAGE)
        return score_node(computed, node_info.node), SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        computed = pre_score_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        return score_rows(computed, table, rows)

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows, scores: Scores
    ) -> Status:
        if state.get(PRE_SCORE_STATE_KEY, PreScoreState) is None:
            return Status.missing_state(PRE_SCORE_STATE_KEY)
        normalize(scores)
        return SUCCESS

    # ---- Signature -------------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # The pod's own terms are matched against where other pods went, which changes with
        # every placement: no such pod is alike another. Without them, existing pods' terms
        # still match the pod by its labels and namespace: their required anti-affinity in
        # Filter whatever the args say (upstream signs nothing when
        # ignorePreferredTermsOfExistingPods is set, overlooking it), and their preferred and
        # required terms in Score unless that is set.
        if pod.has_affinity_terms:
            return None
        return {LABELS: sorted_items(pod.labels), NAMESPACE: pod.namespace}

    # ---- Queueing --------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return self._hints.events()
