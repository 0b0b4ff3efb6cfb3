"""NodeResourcesBalancedAllocation: favour nodes whose resource usage the pod makes more even."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plugins.balanced_allocation.args import NodeResourcesBalancedAllocationArgs
from plugins.balanced_allocation.balance import balanced_allocation_score
from plugins.balanced_allocation.balance_columns import balanced_allocation_score_columns
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
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import ScoreExtensions
from scheduler.framework import Scores
from scheduler.framework import SignFragments
from scheduler.framework import Status

PRE_SCORE_STATE_KEY = "PreScoreNodeResourcesBalancedAllocation"


@dataclass(frozen=True, slots=True)
class PodBalanceRequests:
    """The pod's plain requests (no non-zero defaults) of each balanced resource."""

    values: tuple[int, ...]

    @property
    def best_effort(self) -> bool:
        return not any(self.values)


class NodeResourcesBalancedAllocation:
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None, handle: Handle) -> None:
        args = args if args is not None else NodeResourcesBalancedAllocationArgs()
        self._resource_names = tuple(r.name for r in args.resources)
        self._score_memo = RowMemo()
        # Only to tell which pods may be signed: NodeResourcesFit answers the same.
        self._device_classes = DeviceClassResolver(lambda: handle.lister(DEVICE_CLASSES))

    def _pod_requests(self, pod: Pod) -> PodBalanceRequests:
        return PodBalanceRequests(pod_requests_for(pod, self._resource_names, use_requested=True))

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        requests = self._pod_requests(pod)
        if requests.best_effort:
            # A pod requesting none of the resources would otherwise pile onto the nodes that
            # already look balanced; upstream skips scoring it.
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, requests)
        return Status()

    def _requests(self, state: CycleState, pod: Pod) -> PodBalanceRequests:
        found = state.get(PRE_SCORE_STATE_KEY, PodBalanceRequests)
        return found if found is not None else self._pod_requests(pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        requests = self._requests(state, pod)
        if requests.best_effort:
            return 0, Status()
        devices = device_totals_for(state, self._resource_names, requests.values)
        allocation = node_allocation(
            node_info, self._resource_names, requests.values, use_requested=True, devices=devices
        )
        score = balanced_allocation_score(
            allocation.requested, allocation.allocated, allocation.allocatable
        )
        return score, Status()

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        requests = self._requests(state, pod)
        if requests.best_effort:
            return np.zeros(len(rows), dtype=np.int64)
        if device_totals_for(state, self._resource_names, requests.values) is not None:
            # Balanced by devices on some nodes: their use changes with every allocation, so
            # each node is scored afresh.
            return scored_node_by_node(self.score, state, pod, table, rows)

        def compute(some: Rows) -> Scores:
            if len(some) <= FEW_REFRESHED_ROWS:
                allocations = row_allocations(
                    table, some, self._resource_names, requests.values, use_requested=True
                )
                if allocations is not None:
                    scores = [
                        balanced_allocation_score(a.requested, a.allocated, a.allocatable)
                        for a in allocations
                    ]
                    return np.array(scores, dtype=np.int64)
            columns = scored_columns(
                table, some, self._resource_names, requests.values, use_requested=True
            )
            return balanced_allocation_score_columns(columns, len(some))

        # A node's score depends only on its row and the pod's requests.
        scores: Scores = self._score_memo.at(table, rows, requests.values, compute)
        return scores

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Scored by the pod's requests; one that devices may serve is scored by the devices of
        # its own claim, so such a pod is unsignable (as NodeResourcesFit says too).
        return resources_fragments(pod, self._device_classes)
