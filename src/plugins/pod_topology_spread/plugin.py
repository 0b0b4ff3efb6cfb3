"""PodTopologySpread: spreads matching pods evenly over topology domains."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import Final

from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from plugins.helpers.pod_count_extensions import PodCountExtensions
from plugins.helpers.score_state import pre_score_state
from plugins.pod_topology_spread.args import PodTopologySpreadArgs
from plugins.pod_topology_spread.constraints import DO_NOT_SCHEDULE
from plugins.pod_topology_spread.constraints import SCHEDULE_ANYWAY
from plugins.pod_topology_spread.constraints import SYSTEM_DEFAULT_CONSTRAINTS
from plugins.pod_topology_spread.constraints import SpreadConstraint
from plugins.pod_topology_spread.constraints import constraints_for_action
from plugins.pod_topology_spread.default_selector import default_selector
from plugins.pod_topology_spread.domain_sums import DomainSums
from plugins.pod_topology_spread.filtering import PRE_FILTER_STATE_KEY
from plugins.pod_topology_spread.filtering import PreFilterState
from plugins.pod_topology_spread.filtering import compute_pre_filter_state
from plugins.pod_topology_spread.filtering import filter_node
from plugins.pod_topology_spread.filtering import filter_rows
from plugins.pod_topology_spread.hints import SpreadHints
from plugins.pod_topology_spread.pod_counts import MatchingPodCounts
from plugins.pod_topology_spread.scoring import PRE_SCORE_STATE_KEY
from plugins.pod_topology_spread.scoring import PreScoreState
from plugins.pod_topology_spread.scoring import compute_pre_score_state
from plugins.pod_topology_spread.scoring import normalize
from plugins.pod_topology_spread.scoring import score_node
from plugins.pod_topology_spread.scoring import score_rows
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
from scheduler.objects.labels import SelectorError
from scheduler.objects.taints import COMPARISON_OPERATORS_GATE

NAME: Final = "PodTopologySpread"

_ACTION_WORDS: Final = {DO_NOT_SCHEDULE: "hard", SCHEDULE_ANYWAY: "soft"}


class ConstraintError(Exception):
    """A pod's constraint cannot be evaluated (an invalid label selector)."""


class PodTopologySpread(PodCountExtensions):
    """Hard constraints in Filter, soft ones in Score; system or listed defaults otherwise."""

    name = NAME

    def __init__(self, args: PodTopologySpreadArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else PodTopologySpreadArgs()
        self._handle = handle
        # Whether tolerations may compare with Lt and Gt, for nodeTaintsPolicy Honor.
        self._comparisons = handle.feature_enabled(COMPARISON_OPERATORS_GATE)
        defaults: tuple[Mapping[str, Any], ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS
            if self._args.system_defaulted
            else tuple(c.as_api_dict() for c in self._args.default_constraints)
        )
        # Parsed once: their selector is replaced per pod (matchLabelKeys cannot add to it,
        # since default constraints carry no labelSelector).
        self._defaults = {
            action: constraints_for_action(defaults, {}, action)
            for action in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
        }
        self._pod_counts = MatchingPodCounts()
        self._domain_sums = DomainSums(self._pod_counts)
        self._hints = SpreadHints(lambda pod: self.constraints(pod, DO_NOT_SCHEDULE))

    @property
    def args(self) -> PodTopologySpreadArgs:
        return self._args

    def constraints(self, pod: Pod, action: str) -> tuple[SpreadConstraint, ...]:
        """The pod's own constraints for `action`, or the default ones if it has none.

        Default constraints apply only with a non-empty selector deduced from the Services and
        controller of the pod. Raises ConstraintError for an invalid selector.
        """
        word = _ACTION_WORDS[action]
        if pod.topology_spread_constraints:
            try:
                return constraints_for_action(pod.topology_spread_constraints, pod.labels, action)
            except SelectorError as exc:
                raise ConstraintError(
                    f"obtaining pod's {word} topology spread constraints: {exc}"
                ) from exc
        defaults = self._defaults[action]
        if not defaults:
            return ()
        selector = default_selector(pod, self._handle)
        if not selector.requirements:
            return ()
        return tuple(c.with_selector(selector) for c in defaults)

    # ---- PreFilter -------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except ConstraintError as exc:
            return None, Status.from_error(f"get constraints from pod: {exc}")
        if not constraints:
            return None, Status.skip()
        computed = compute_pre_filter_state(
            pod,
            constraints,
            table,
            self._domain_sums,
            self._pod_counts,
            comparisons=self._comparisons,
        )
        state.write(PRE_FILTER_STATE_KEY, computed)
        return None, SUCCESS

    def _count_pod(self, state: CycleState, other: Pod, node_info: NodeInfo, delta: int) -> Status:
        computed = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if computed is None:
            return Status.missing_state(PRE_FILTER_STATE_KEY, lead="reading")
        computed.update_with_pod(other, node_info.node, delta)
        return SUCCESS

    # ---- Filter ----------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        computed = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if computed is None:
            return Status.missing_state(PRE_FILTER_STATE_KEY, lead="reading")
        if node_info.node is None:
            return Status.from_error(NODE_NOT_FOUND_MESSAGE)
        return filter_node(computed, node_info.node)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        computed = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if computed is None:
            return FilterBatch.uniform(
                Status.missing_state(PRE_FILTER_STATE_KEY, lead="reading"), len(rows)
            )
        return filter_rows(computed, table, rows)

    # ---- Score -----------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        if table.size == 0:
            return Status.skip()
        try:
            constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        except ConstraintError as exc:
            return Status.from_error(f"calculating preScoreState: {exc}")
        if not constraints:
            return Status.skip()
        # Defaults spread by hostname even on nodes without a zone label, unless they were
        # listed by the user.
        require_all_keys = bool(pod.topology_spread_constraints) or not self._args.system_defaulted
        computed = compute_pre_score_state(
            pod,
            constraints,
            table,
            rows,
            require_all_keys,
            self._pod_counts,
            self._domain_sums,
            comparisons=self._comparisons,
        )
        state.write(PRE_SCORE_STATE_KEY, computed)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        computed = state.get(PRE_SCORE_STATE_KEY, PreScoreState)
        if computed is None:
            return 0, Status.missing_state(PRE_SCORE_STATE_KEY)
        return score_node(computed, node_info), SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        computed = pre_score_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        return score_rows(computed, table, rows)

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows, scores: Scores
    ) -> Status:
        computed = state.get(PRE_SCORE_STATE_KEY, PreScoreState)
        if computed is None:
            return Status.missing_state(PRE_SCORE_STATE_KEY)
        normalize(computed, rows, scores)
        return SUCCESS

    # ---- Signature -------------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Spreading counts the matching pods in each domain, which changes with every
        # placement: a pod under constraints, its own or the defaults, is alike no other.
        # Defaults (System defaulting included) apply to any pod a Service or controller
        # selects, so with any configured no pod is signed, as upstream decides.
        if pod.topology_spread_constraints or any(self._defaults.values()):
            return None
        return {}

    # ---- Queueing --------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return self._hints.events()
