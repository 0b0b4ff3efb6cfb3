"""GPUAware: send GPU pods to the least (Spread) or most (Pack) utilised GPU nodes."""

from __future__ import annotations

import numpy as np

from plugins.gpu_aware.args import GPUAwareArgs
from plugins.gpu_aware.args import Strategy
from plugins.gpu_aware.formulas import gpu_score
from plugins.gpu_aware.formulas import gpu_score_rows
from plugins.helpers import score_on_node
from plugins.helpers.prometheus import PrometheusSource
from scheduler.framework import MIN_NODE_SCORE
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import MetricSamples
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import ScoreExtensions
from scheduler.framework import Scores
from scheduler.framework import Status

GPU_UTIL = "gpuUtilization"
FREE_MEMORY = "freeMemoryPercent"


class GPUAware:
    name = "GPUAware"

    def __init__(self, args: GPUAwareArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else GPUAwareArgs()
        self._handle = handle
        self._pack = self._args.strategy is Strategy.PACK
        queries = {
            GPU_UTIL: self._args.queries.gpu_utilization,
            FREE_MEMORY: self._args.queries.free_memory_percent,
        }
        self.source = PrometheusSource(self._args.prometheus, queries, handle, self.name)
        self.source.start()

    def is_gpu_pod(self, pod: Pod) -> bool:
        return any(pod.requests.get(name, 0) > 0 for name in self._args.gpu_resources)

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        if not self.is_gpu_pod(pod):
            return Status.skip()
        if self.source.check_staleness():
            # Old numbers would steer pods by a load that no longer exists: take no part.
            self.source.note_neutral()
            return Status.skip()
        return Status()

    @score_on_node
    def score(self, state: CycleState, pod: Pod, node: Node) -> tuple[int, Status]:
        if not self.is_gpu_pod(pod) or self.source.check_staleness():
            return MIN_NODE_SCORE, SUCCESS
        now = self._handle.clock.now()
        utilization = self.source.value(GPU_UTIL, node.name, now)
        free_memory = self.source.value(FREE_MEMORY, node.name, now)
        score = gpu_score(
            None if utilization is None else utilization[0],
            None if free_memory is None else free_memory[0],
            self._pack,
            self._args.utilization_weight,
            self._args.free_memory_weight,
        )
        return score, SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        if not self.is_gpu_pod(pod) or self.source.check_staleness():
            return np.full(len(rows), MIN_NODE_SCORE, dtype=np.int64)
        now = self._handle.clock.now()
        utilization, _ = self.source.row_values(GPU_UTIL, table, rows, now)
        free_memory, _ = self.source.row_values(FREE_MEMORY, table, rows, now)
        scores: Scores = gpu_score_rows(
            utilization,
            free_memory,
            self._pack,
            self._args.utilization_weight,
            self._args.free_memory_weight,
        )
        return scores

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    def metric_samples(self) -> MetricSamples:
        return self.source.metric_samples()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A Score plugin never makes a pod unschedulable, so no event can make one schedulable
        # on its account; registering none keeps it out of requeueing decisions.
        return []
