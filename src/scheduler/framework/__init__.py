"""The public plugin API of kube-pyscheduler. Plugin authors import from here only."""

from scheduler.framework.args import ArgsModel, Int32, Int64, PluginArgs
from scheduler.framework.batch import FilterBatch
from scheduler.framework.clock import Clock, SystemClock, Timer
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
    QueueingHintFn,
)
from scheduler.framework.field_errors import FieldErrors
from scheduler.framework.handle import (
    ClusterAPI,
    Handle,
    IndexFunc,
    Lister,
    ObjectReference,
    WaitingPod,
)
from scheduler.framework.log import get_logger
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import (
    BatchFilterPlugin,
    BatchScorePlugin,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    MetricSamples,
    MetricsReporter,
    NodeStatusReader,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    Rows,
    ScoreExtensions,
    ScorePlugin,
    Scores,
)
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.spec import PluginSpec
from scheduler.framework.status import MAX_NODE_SCORE, MIN_NODE_SCORE, SUCCESS, Code, Status
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "SUCCESS",
    "ActionType",
    "ArgsModel",
    "BatchFilterPlugin",
    "BatchScorePlugin",
    "BindPlugin",
    "Clock",
    "ClusterAPI",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "EnqueueExtensions",
    "EventObject",
    "EventResource",
    "FieldErrors",
    "FilterBatch",
    "FilterPlugin",
    "Handle",
    "IndexFunc",
    "Int32",
    "Int64",
    "Lister",
    "MetricSamples",
    "MetricsReporter",
    "Node",
    "NodeInfo",
    "NodeStatusReader",
    "NodeTable",
    "ObjectReference",
    "PermitPlugin",
    "Plugin",
    "PluginArgs",
    "PluginSpec",
    "Pod",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "QueueingHintFn",
    "ReservePlugin",
    "Rows",
    "ScoreExtensions",
    "ScorePlugin",
    "Scores",
    "Status",
    "SystemClock",
    "Timer",
    "WaitingPod",
    "get_logger",
]
