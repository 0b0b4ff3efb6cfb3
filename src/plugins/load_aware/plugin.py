"""LoadAware: score nodes by their measured load (Trimaran's two strategies), from Prometheus."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plugins.helpers import score_on_node
from plugins.helpers.prometheus import PrometheusSource
from plugins.load_aware.args import LoadAwareArgs
from plugins.load_aware.args import Mode
from plugins.load_aware.demand import predicted_cpu_millis
from plugins.load_aware.demand import requested
from plugins.load_aware.formulas import Floats
from plugins.load_aware.formulas import combine_risk_scores
from plugins.load_aware.formulas import combine_risk_scores_rows
from plugins.load_aware.formulas import resource_risk_score
from plugins.load_aware.formulas import resource_risk_score_rows
from plugins.load_aware.formulas import target_load_packing
from plugins.load_aware.formulas import target_load_packing_rows
from plugins.load_aware.recent import Placement
from plugins.load_aware.recent import RecentPlacements
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
from scheduler.objects.resources import CPU
from scheduler.objects.resources import MEMORY

CPU_UTIL = "cpuUtilization"
CPU_STD = "cpuStdDev"
MEMORY_UTIL = "memoryUtilization"
MEMORY_STD = "memoryStdDev"
PRE_SCORE_STATE_KEY = "PreScoreLoadAware"


@dataclass(frozen=True, slots=True)
class PodDemand:
    """What the pod adds: predicted CPU for packing, requests for risk balancing."""

    cpu_millis: float
    memory_bytes: float


class LoadAware:
    name = "LoadAware"

    def __init__(self, args: LoadAwareArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else LoadAwareArgs()
        self._handle = handle
        queries = {CPU_UTIL: self._args.queries.cpu_utilization}
        if self._args.mode is Mode.LOAD_VARIATION_RISK_BALANCING:
            queries[CPU_STD] = self._args.queries.cpu_std_dev
            queries[MEMORY_UTIL] = self._args.queries.memory_utilization
            queries[MEMORY_STD] = self._args.queries.memory_std_dev
        self.source = PrometheusSource(self._args.prometheus, queries, handle, self.name)
        self._default_cpu_millis = self._args.default_requests.cpu_millis
        keep_for = (
            self._args.prometheus.max_staleness_seconds + self._args.reporting_interval_seconds
        )
        self._recent = RecentPlacements(self._args.reporting_interval_seconds, keep_for)
        self.source.start()

    # -- PreScore -------------------------------------------------------------------------

    def _demand(self, pod: Pod) -> PodDemand:
        if self._args.mode is Mode.TARGET_LOAD_PACKING:
            cpu = predicted_cpu_millis(
                pod, self._default_cpu_millis, self._args.default_requests_multiplier
            )
            return PodDemand(float(cpu), 0.0)
        cpu_request, memory_request = requested(pod)
        return PodDemand(float(cpu_request), float(memory_request))

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        if self.source.check_staleness():
            # Old numbers would steer pods by a load that no longer exists: take no part.
            self.source.note_neutral()
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, self._demand(pod))
        return Status()

    def _pod_demand(self, state: CycleState, pod: Pod) -> PodDemand:
        found = state.get(PRE_SCORE_STATE_KEY, PodDemand)
        return found if found is not None else self._demand(pod)

    # -- Score ----------------------------------------------------------------------------

    @score_on_node
    def score(self, state: CycleState, pod: Pod, node: Node) -> tuple[int, Status]:
        if self.source.check_staleness():
            return MIN_NODE_SCORE, SUCCESS
        demand = self._pod_demand(state, pod)
        now = self._handle.clock.now()
        cpu_capacity = float(node.allocatable.get(CPU, 0))
        cpu_util = self.source.value(CPU_UTIL, node.name, now)
        if self._args.mode is Mode.TARGET_LOAD_PACKING:
            if cpu_util is None:
                return MIN_NODE_SCORE, SUCCESS
            recent_cpu, _ = self._recent.on_node(node.name, cpu_util[1])
            added = demand.cpu_millis + recent_cpu
            score = target_load_packing(
                cpu_util[0], cpu_capacity, added, self._args.target_utilization
            )
            return score, SUCCESS
        memory_util = self.source.value(MEMORY_UTIL, node.name, now)
        cpu_score = memory_score = None
        if cpu_util is not None:
            recent_cpu, _ = self._recent.on_node(node.name, cpu_util[1])
            cpu_score = self._risk(
                cpu_util[0], self._std(CPU_STD, node.name, now), cpu_capacity,
                demand.cpu_millis + recent_cpu,
            )  # fmt: skip
        if memory_util is not None:
            _, recent_memory = self._recent.on_node(node.name, memory_util[1])
            memory_score = self._risk(
                memory_util[0], self._std(MEMORY_STD, node.name, now),
                float(node.allocatable.get(MEMORY, 0)), demand.memory_bytes + recent_memory,
            )  # fmt: skip
        return combine_risk_scores(cpu_score, memory_score), SUCCESS

    def _std(self, query: str, node: str, now: float) -> float:
        # A missing deviation is no deviation; the mean alone still says something.
        found = self.source.value(query, node, now)
        return 0.0 if found is None else found[0]

    def _risk(self, util: float, std: float, capacity: float, demand: float) -> float:
        args = self._args
        return resource_risk_score(
            util * capacity / 100,
            std * capacity / 100,
            demand,
            capacity,
            args.safe_variance_margin,
            args.safe_variance_sensitivity,
        )

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        if self.source.check_staleness():
            return np.full(len(rows), MIN_NODE_SCORE, dtype=np.int64)
        demand = self._pod_demand(state, pod)
        now = self._handle.clock.now()
        cpu_capacity = table.gather(table.allocatable_of(CPU), rows).astype(np.float64)
        cpu_util, cpu_seen = self.source.row_values(CPU_UTIL, table, rows, now)
        recent_cpu, _ = self._recent.on_rows(table, rows, cpu_seen)
        if self._args.mode is Mode.TARGET_LOAD_PACKING:
            scores: Scores = target_load_packing_rows(
                cpu_util, cpu_capacity, demand.cpu_millis + recent_cpu,
                self._args.target_utilization,
            )  # fmt: skip
            return scores
        memory_capacity = table.gather(table.allocatable_of(MEMORY), rows).astype(np.float64)
        memory_util, memory_seen = self.source.row_values(MEMORY_UTIL, table, rows, now)
        _, recent_memory = self._recent.on_rows(table, rows, memory_seen)
        cpu_std, _ = self.source.row_values(CPU_STD, table, rows, now)
        memory_std, _ = self.source.row_values(MEMORY_STD, table, rows, now)
        cpu_score = self._risk_rows(cpu_util, cpu_std, cpu_capacity, demand.cpu_millis + recent_cpu)
        memory_score = self._risk_rows(
            memory_util, memory_std, memory_capacity, demand.memory_bytes + recent_memory
        )
        # A resource without a measurement has no risk score (NaN), whatever its capacity.
        cpu_score = np.where(np.isnan(cpu_util), np.nan, cpu_score)
        memory_score = np.where(np.isnan(memory_util), np.nan, memory_score)
        combined: Scores = combine_risk_scores_rows(cpu_score, memory_score)
        return combined

    def _risk_rows(self, util: Floats, std: Floats, capacity: Floats, demand: Floats) -> Floats:
        """`_risk` over rows; a missing deviation (NaN) is no deviation."""
        return resource_risk_score_rows(
            util * capacity / 100,
            np.nan_to_num(std, nan=0.0) * capacity / 100,
            demand,
            capacity,
            self._args.safe_variance_margin,
            self._args.safe_variance_sensitivity,
        )

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    # -- Reserve: count the pod against the node until the measurements can show it ------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        demand = self._pod_demand(state, pod)
        placement = Placement(
            node_name, self._handle.clock.now(), demand.cpu_millis, demand.memory_bytes
        )
        self._recent.add(pod.uid or pod.key, placement)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._recent.remove(pod.uid or pod.key)

    # -- QueueingHints --------------------------------------------------------------------

    def metric_samples(self) -> MetricSamples:
        return self.source.metric_samples()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A Score plugin never makes a pod unschedulable, so no event can make one schedulable
        # on its account; registering none keeps it out of requeueing decisions.
        return []
