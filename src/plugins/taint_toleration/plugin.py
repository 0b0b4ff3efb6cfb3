"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from plugins.helpers import DO_NOT_SCHEDULE_EFFECTS
from plugins.helpers import DefaultNormalizer
from plugins.helpers import after_own_update
from plugins.helpers import count_intolerable_prefer_no_schedule
from plugins.helpers import filter_on_node
from plugins.helpers import prefer_no_schedule_tolerations
from plugins.helpers import score_on_node
from plugins.helpers import taint_events
from plugins.helpers import untolerated_rows
from plugins.helpers.signatures import tolerations_fragments
from plugins.taint_toleration.hints import is_schedulable_after_node_change
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import FilterBatch
from scheduler.framework import Handle
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import PluginArgs
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import Scores
from scheduler.framework import SignFragments
from scheduler.framework import Status
from scheduler.objects.taints import COMPARISON_OPERATORS_GATE
from scheduler.objects.taints import Taint
from scheduler.objects.taints import Toleration
from scheduler.objects.taints import first_untolerated

# Since v1.35 (and v1.34 patches) upstream no longer names the taint in the reason, so that
# taint keys and values do not leak into pod status; the taint is only logged.
REASON = "node(s) had untolerated taint(s)"

PRE_SCORE_STATE_KEY = "PreScoreTaintToleration"


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """The pod's tolerations that can tolerate a PreferNoSchedule taint."""

    tolerations: tuple[Toleration, ...]


class TaintToleration:
    name = "TaintToleration"

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self._normalizer = DefaultNormalizer(reverse=True)
        # Whether tolerations may compare a taint's value with Lt and Gt.
        self._comparisons = handle.feature_enabled(COMPARISON_OPERATORS_GATE)

    # ---- Filter ---------------------------------------------------------------------

    @filter_on_node
    def filter(self, state: CycleState, pod: Pod, node: Node) -> Status:
        taint = first_untolerated(
            node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS, comparisons=self._comparisons
        )
        if taint is None:
            return SUCCESS
        return Status.unresolvable(REASON)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        rejected = untolerated_rows(
            table, rows, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS, comparisons=self._comparisons
        )
        return FilterBatch.reject_where(rejected, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON)

    # ---- Score ----------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        state.write(
            PRE_SCORE_STATE_KEY, PreScoreState(prefer_no_schedule_tolerations(pod.tolerations))
        )
        return SUCCESS

    def _tolerations(self, state: CycleState, pod: Pod) -> tuple[Toleration, ...]:
        found = state.get(PRE_SCORE_STATE_KEY, PreScoreState)
        if found is not None:
            return found.tolerations
        # PreScore did not run (e.g. disabled at that point): derive the same value.
        return prefer_no_schedule_tolerations(pod.tolerations)

    @score_on_node
    def score(self, state: CycleState, pod: Pod, node: Node) -> tuple[int, Status]:
        tolerations = self._tolerations(state, pod)
        comparisons = self._comparisons
        intolerable = count_intolerable_prefer_no_schedule(
            node.taints, tolerations, comparisons=comparisons
        )
        return intolerable, SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        tolerations = self._tolerations(state, pod)
        comparisons = self._comparisons

        def intolerable(taints: tuple[Taint, ...]) -> int:
            return count_intolerable_prefer_no_schedule(
                taints, tolerations, comparisons=comparisons
            )

        key = ("intolerablePreferNoSchedule", tolerations, comparisons)
        per_set = table.per_taint_set(key, intolerable)
        if not per_set.any():
            return np.zeros(len(rows), dtype=np.int64)
        scores: Scores = per_set.astype(np.int64)[table.gather(table.taint_set_id, rows)]
        return scores

    def score_extensions(self) -> DefaultNormalizer:
        # Fewer intolerable PreferNoSchedule taints is better: normalize reversed.
        return self._normalizer

    # ---- Signature ------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Filter and Score read the pod's tolerations and nothing else of the pod.
        return tolerations_fragments(pod)

    # ---- QueueingHints --------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A toleration added to the rejected pod itself may make it fit.
        after_node_change = functools.partial(
            is_schedulable_after_node_change, comparisons=self._comparisons
        )
        return taint_events(after_node_change, after_own_update)
