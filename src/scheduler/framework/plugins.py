"""One Protocol per extension point. A plugin implements any subset of them.

Hot-path methods are synchronous; only PreBind, Bind and PostBind may await. The runtime
decides which extension points a plugin implements by the methods it defines, so a plugin is
a plain class with a `name` attribute and the methods it needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from scheduler.framework.batch import FilterBatch
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod

Rows = npt.NDArray[np.int64]
Scores = npt.NDArray[np.int64]


@runtime_checkable
class Plugin(Protocol):
    name: str


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin narrows the search to; None means every node."""

    node_names: frozenset[str] | None = None

    @property
    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


class NominatingMode(Enum):
    NOOP = "Noop"
    OVERRIDE = "Override"


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    nominated_node_name: str = ""
    mode: NominatingMode = NominatingMode.OVERRIDE


class NodeStatusReader(Protocol):
    """Filter outcomes of the cycle, for PostFilter plugins."""

    def status_of(self, node_name: str) -> Status: ...

    def nodes_with_code(self, code: int) -> Sequence[str]: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


class PreFilterExtensions(Protocol):
    """Keeps PreFilter state right when pods are hypothetically added to or removed from a node."""

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status: ...

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    """Optional vectorized Filter over table rows; must agree with `filter` row by row."""

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status: ...


class ScoreExtensions(Protocol):
    def normalize_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows, scores: Scores
    ) -> Status:
        """Rewrite `scores` (aligned with `rows`) in place into [0, 100]."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    """Optional vectorized Score; must agree with `score` row by row."""

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """Success, a rejection, or Wait with a timeout in seconds (capped at 15 minutes)."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> list[ClusterEventWithHint]: ...


MetricSamples = Mapping[str, Iterable[tuple[Sequence[str], float]]]
"""Samples by metric family name: (label values in the family's order, value) pairs."""


@runtime_checkable
class MetricsReporter(Plugin, Protocol):
    """Optional: values a plugin reports when /metrics is scraped, for the plugin families the
    scheduler's metric catalog declares. Called on the event loop; it must only read."""

    def metric_samples(self) -> MetricSamples: ...


# The method that marks a class as implementing each extension point.
EXTENSION_POINT_METHODS: dict[str, str] = {
    "PreEnqueue": "pre_enqueue",
    "QueueSort": "less",
    "PreFilter": "pre_filter",
    "Filter": "filter",
    "PostFilter": "post_filter",
    "PreScore": "pre_score",
    "Score": "score",
    "Reserve": "reserve",
    "Permit": "permit",
    "PreBind": "pre_bind",
    "Bind": "bind",
    "PostBind": "post_bind",
}


def implemented_extension_points(plugin_class: type) -> list[str]:
    """Extension points a plugin class implements, in upstream's order."""
    return [
        point
        for point, method in EXTENSION_POINT_METHODS.items()
        if callable(getattr(plugin_class, method, None))
    ]
