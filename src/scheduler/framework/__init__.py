"""The public plugin API of kube-pyscheduler. Plugin authors import from here only."""

from scheduler.framework.args import ArgsModel
from scheduler.framework.args import Int32
from scheduler.framework.args import Int64
from scheduler.framework.args import PluginArgs
from scheduler.framework.batch import FilterBatch
from scheduler.framework.clock import Clock
from scheduler.framework.clock import SystemClock
from scheduler.framework.clock import Timer
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventObject
from scheduler.framework.events import EventResource
from scheduler.framework.events import QueueingHint
from scheduler.framework.events import QueueingHintFn
from scheduler.framework.extenders import ExtenderError
from scheduler.framework.extenders import Extenders
from scheduler.framework.extenders import PodsOnNode
from scheduler.framework.extenders import Victims
from scheduler.framework.field_errors import FieldErrors
from scheduler.framework.handle import ClusterAPI
from scheduler.framework.handle import EventDetails
from scheduler.framework.handle import Handle
from scheduler.framework.handle import IndexFunc
from scheduler.framework.handle import Lister
from scheduler.framework.handle import ObjectReference
from scheduler.framework.handle import PodInPreBind
from scheduler.framework.handle import WaitingPod
from scheduler.framework.log import get_logger
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import AwaitingPostFilterPlugin
from scheduler.framework.plugins import BatchFilterPlugin
from scheduler.framework.plugins import BatchScorePlugin
from scheduler.framework.plugins import BindPlugin
from scheduler.framework.plugins import EnqueueExtensions
from scheduler.framework.plugins import FilterDetails
from scheduler.framework.plugins import FilterPlugin
from scheduler.framework.plugins import MetricSamples
from scheduler.framework.plugins import MetricsReporter
from scheduler.framework.plugins import NodeStatusReader
from scheduler.framework.plugins import PermitPlugin
from scheduler.framework.plugins import Plugin
from scheduler.framework.plugins import PostBindPlugin
from scheduler.framework.plugins import PostFilterPlugin
from scheduler.framework.plugins import PostFilterResult
from scheduler.framework.plugins import PreBindPlugin
from scheduler.framework.plugins import PreBindPreFlightPlugin
from scheduler.framework.plugins import PreEnqueuePlugin
from scheduler.framework.plugins import PreFilterExtensions
from scheduler.framework.plugins import PreFilterPlugin
from scheduler.framework.plugins import PreFilterResult
from scheduler.framework.plugins import PreScorePlugin
from scheduler.framework.plugins import QueueSortPlugin
from scheduler.framework.plugins import ReservePlugin
from scheduler.framework.plugins import Rows
from scheduler.framework.plugins import ScoreExtensions
from scheduler.framework.plugins import ScorePlugin
from scheduler.framework.plugins import Scores
from scheduler.framework.plugins import SignFragments
from scheduler.framework.plugins import SignPlugin
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.spec import PluginSpec
from scheduler.framework.status import MAX_NODE_SCORE
from scheduler.framework.status import MIN_NODE_SCORE
from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "SUCCESS",
    "ActionType",
    "ArgsModel",
    "AwaitingPostFilterPlugin",
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
    "EventDetails",
    "EventObject",
    "EventResource",
    "ExtenderError",
    "Extenders",
    "FieldErrors",
    "FilterBatch",
    "FilterDetails",
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
    "PodInPreBind",
    "PodsOnNode",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreBindPreFlightPlugin",
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
    "SignFragments",
    "SignPlugin",
    "Status",
    "SystemClock",
    "Timer",
    "Victims",
    "WaitingPod",
    "get_logger",
]
