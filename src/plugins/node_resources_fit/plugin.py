"""NodeResourcesFit: reject nodes without room for the pod's requests, and score the rest."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plugins.helpers.extended_resources import DEVICE_CLASSES
from plugins.helpers.extended_resources import DeviceClassResolver
from plugins.helpers.extended_resources import device_totals_for
from plugins.helpers.node_methods import scored_node_by_node
from plugins.helpers.resources.allocation import FEW_REFRESHED_ROWS
from plugins.helpers.resources.allocation import node_allocation
from plugins.helpers.resources.allocation import pod_requests_for
from plugins.helpers.resources.allocation import row_allocations
from plugins.helpers.resources.allocation import scored_columns
from plugins.helpers.row_memo import RowMemo
from plugins.helpers.signatures import resources_fragments
from plugins.node_resources_fit.args import NodeResourcesFitArgs
from plugins.node_resources_fit.fits import IgnoredResources
from plugins.node_resources_fit.fits import node_insufficient_resources
from plugins.node_resources_fit.fits import status_of
from plugins.node_resources_fit.fits_batch import filter_rows_remembered
from plugins.node_resources_fit.hints import after_device_class_change
from plugins.node_resources_fit.hints import after_node_change
from plugins.node_resources_fit.hints import after_pod_event
from plugins.node_resources_fit.requests import PRE_FILTER_STATE_KEY
from plugins.node_resources_fit.requests import PodResourceRequest
from plugins.node_resources_fit.strategies import build_scorer
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterBatch
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PreFilterExtensions
from scheduler.framework import PreFilterResult
from scheduler.framework import Rows
from scheduler.framework import ScoreExtensions
from scheduler.framework import Scores
from scheduler.framework import SignFragments
from scheduler.framework import Status

PRE_SCORE_STATE_KEY = "PreScoreNodeResourcesFit"


@dataclass(frozen=True, slots=True)
class PodScoreRequests:
    """The pod's request of each scored resource (cpu and memory as non-zero requests)."""

    values: tuple[int, ...]


class NodeResourcesFit:
    name = "NodeResourcesFit"

    def __init__(self, args: NodeResourcesFitArgs | None, handle: Handle) -> None:
        args = args if args is not None else NodeResourcesFitArgs()
        self._ignored = IgnoredResources(
            frozenset(args.ignored_resources), frozenset(args.ignored_resource_groups)
        )
        self._resource_names = tuple(r.name for r in args.scoring_strategy.resources)
        self._scorer = build_scorer(args.scoring_strategy)
        self._score_memo = RowMemo()
        # Each row's failed checks, by the checked quantities, kept across cycles.
        self._fit_memo = RowMemo()
        self._device_classes = DeviceClassResolver(lambda: handle.lister(DEVICE_CLASSES))

    # ---- PreFilter / Filter -----------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        state.write(PRE_FILTER_STATE_KEY, PodResourceRequest.of_pod(pod, self._device_classes))
        return None, Status()

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _request(self, state: CycleState) -> PodResourceRequest | Status:
        request = state.get(PRE_FILTER_STATE_KEY, PodResourceRequest)
        if request is None:
            return Status.missing_state(PRE_FILTER_STATE_KEY)
        return request

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        request = self._request(state)
        if isinstance(request, Status):
            return request
        return status_of(node_insufficient_resources(request, node_info, self._ignored))

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        request = self._request(state)
        if isinstance(request, Status):
            return FilterBatch.uniform(request, len(rows))
        return filter_rows_remembered(request, table, rows, self._ignored, self._fit_memo)

    # ---- PreScore / Score -------------------------------------------------------------

    def _pod_score_requests(self, pod: Pod) -> PodScoreRequests:
        # Upstream's Fit scorer is built without pod-level resources: containers only.
        requests = pod_requests_for(pod, self._resource_names, use_requested=False, pod_level=False)
        return PodScoreRequests(requests)

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        state.write(PRE_SCORE_STATE_KEY, self._pod_score_requests(pod))
        return Status()

    def _score_requests(self, state: CycleState, pod: Pod) -> tuple[int, ...]:
        found = state.get(PRE_SCORE_STATE_KEY, PodScoreRequests)
        return (found if found is not None else self._pod_score_requests(pod)).values

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        requests = self._score_requests(state, pod)
        devices = device_totals_for(state, self._resource_names, requests)
        allocation = node_allocation(
            node_info, self._resource_names, requests, use_requested=False, devices=devices
        )
        return self._scorer.score(allocation.requested, allocation.allocatable), Status()

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        requests = self._score_requests(state, pod)
        if device_totals_for(state, self._resource_names, requests) is not None:
            # Scored by devices on some nodes: their use changes with every allocation, so
            # each node is scored afresh.
            return scored_node_by_node(self.score, state, pod, table, rows)

        def compute(some: Rows) -> Scores:
            if len(some) <= FEW_REFRESHED_ROWS:
                allocations = row_allocations(
                    table, some, self._resource_names, requests, use_requested=False
                )
                if allocations is not None:
                    scores = [self._scorer.score(a.requested, a.allocatable) for a in allocations]
                    return np.array(scores, dtype=np.int64)
            columns = scored_columns(
                table, some, self._resource_names, requests, use_requested=False
            )
            return self._scorer.score_columns(columns, len(some))

        # A node's score depends only on its row and the pod's requests.
        scores: Scores = self._score_memo.at(table, rows, requests, compute)
        return scores

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    # ---- Signature --------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Filter and Score read the pod's requests only; a resource a DeviceClass provides is
        # checked by the devices the pod's own claim would get, so such a pod is unsignable.
        return resources_fragments(pod, self._device_classes)

    # ---- queueing ---------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        resolver = self._device_classes
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN
                ),
                after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                ),
                lambda pod, old, new: after_node_change(pod, old, new, resolver),
            ),
            # A class that starts providing a resource the pod asks for may let it fit.
            ClusterEventWithHint(
                ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
                after_device_class_change,
            ),
        ]
