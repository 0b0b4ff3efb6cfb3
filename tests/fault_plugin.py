"""A plugin that misbehaves on demand, for tests of fault containment.

A pod asks for a fault with two annotations: `FAULT_AT` names the extension point (as in the
configuration: "Filter", "Score", ...; also "NormalizeScore" and "QueueingHint") and
`FAULT_KIND` what goes wrong there:

- `raise`: the method raises RuntimeError (the default);
- `wrong-type`: the method returns a string where a Status (or pair) belongs;
- `score-150` / `nan`: Score returns 150 / NaN for every node;
- `forbidden`: PreBind patches the pod's node, which the scheduler's RBAC does not allow.

Removing the annotations stops the fault; the plugin reads the pod it is given each time.
Otherwise the plugin is harmless at every point: it passes, scores 0, and Skips Bind.
Only the public API is used, so the module also loads in a daemon with `--plugin`.
"""

from __future__ import annotations

import math
from typing import Any

from scheduler.framework import ClusterEventWithHint
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import PreFilterResult
from scheduler.framework import QueuedPodInfo
from scheduler.framework import Status
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import UNSCHEDULED_POD_UPDATE
from scheduler.framework.events import QueueingHint
from scheduler.framework.plugins import PostFilterResult
from scheduler.framework.plugins import Rows
from scheduler.framework.plugins import Scores

FAULT_AT = "faults.example.com/at"
FAULT_KIND = "faults.example.com/kind"
NAME = "Faulty"

# Extension points where a fault fails the scheduling attempt, in the order a pod meets them.
FAILING_POINTS = (
    "PreFilter",
    "Filter",
    "PostFilter",
    "PreScore",
    "Score",
    "NormalizeScore",
    "Reserve",
    "Permit",
    "PreBind",
    "Bind",
)
# The extension points enabled in `PROFILE_PLUGINS` (QueueSort has its own test).
ENABLED = (
    "PreEnqueue",
    "PreFilter",
    "Filter",
    "PostFilter",
    "PreScore",
    "Score",
    "Reserve",
    "Permit",
    "PreBind",
    "Bind",
    "PostBind",
)


def fault_annotations(point: str, kind: str = "raise") -> dict[str, str]:
    return {FAULT_AT: point, FAULT_KIND: kind}


def profile_plugins() -> dict[str, Any]:
    """The `plugins` section of a profile enabling Faulty at every point above; at Bind it goes
    before DefaultBinder so that it gets its turn."""
    enabled = [{"name": NAME}]
    plugins: dict[str, Any] = {
        point[0].lower() + point[1:]: {"enabled": enabled} for point in ENABLED
    }
    plugins["bind"] = {
        "disabled": [{"name": "DefaultBinder"}],
        "enabled": [*enabled, {"name": "DefaultBinder"}],
    }
    return plugins


class InjectedFaultError(RuntimeError):
    pass


class Faulty:
    name = NAME

    def __init__(self, args: None, handle: Handle) -> None:
        self._handle = handle

    def _kind(self, pod: Pod, point: str) -> str | None:
        if pod.annotations.get(FAULT_AT) != point:
            return None
        return pod.annotations.get(FAULT_KIND, "raise")

    def _status(self, pod: Pod, point: str, ok: Status | None) -> Any:
        kind = self._kind(pod, point)
        if kind is None:
            return ok
        if kind == "wrong-type":
            return f"{point} says no"
        raise InjectedFaultError(f"injected fault at {point}")

    # ---- the extension points --------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status:
        result: Status = self._status(pod, "PreEnqueue", Status())
        return result

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        kind = self._kind(a.pod, "QueueSort")
        if kind == "raise":
            raise InjectedFaultError("injected fault at QueueSort")
        if kind == "wrong-type":
            return "yes"  # type: ignore[return-value]
        return a.timestamp < b.timestamp

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(NODE_ADD, self._hint),
            ClusterEventWithHint(UNSCHEDULED_POD_UPDATE, self._fault_stopped),
        ]

    def _fault_stopped(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if isinstance(new, Pod) and FAULT_AT not in new.annotations:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _hint(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        kind = self._kind(pod, "QueueingHint")
        if kind == "raise":
            raise InjectedFaultError("injected fault at QueueingHint")
        if kind == "wrong-type":
            return "queue"  # type: ignore[return-value]
        return QueueingHint.QUEUE

    def _pair(self, pod: Pod, point: str, ok: tuple[Any, Any]) -> Any:
        kind = self._kind(pod, point)
        if kind == "wrong-type":
            return f"{point} says no"
        if kind is not None:
            raise InjectedFaultError(f"injected fault at {point}")
        return ok

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        result: tuple[PreFilterResult | None, Status] = self._pair(
            pod, "PreFilter", (None, Status())
        )
        return result

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if self._kind(pod, "PostFilter") is not None or self._kind(pod, "QueueingHint"):
            # Nothing fits, so that PostFilter and the queueing hints get asked.
            return Status.unschedulable("Faulty rejects the node")
        result: Status = self._status(pod, "Filter", Status())
        return result

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Any
    ) -> tuple[PostFilterResult | None, Status]:
        result: tuple[PostFilterResult | None, Status] = self._pair(
            pod, "PostFilter", (None, Status.unschedulable())
        )
        return result

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        result: Status = self._status(pod, "PreScore", Status())
        return result

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        kind = self._kind(pod, "Score")
        if kind == "score-150":
            return 150, Status()
        if kind == "nan":
            return math.nan, Status()  # type: ignore[return-value]
        if kind == "wrong-type":
            return "high"  # type: ignore[return-value]
        if kind is not None:
            raise InjectedFaultError("injected fault at Score")
        return 0, Status()

    def score_extensions(self) -> Faulty:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows, scores: Scores
    ) -> Status:
        result: Status = self._status(pod, "NormalizeScore", Status())
        return result

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        result: Status = self._status(pod, "Reserve", Status())
        return result

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._status(pod, "Unreserve", None)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        result: tuple[Status, float] = self._pair(pod, "Permit", (Status(), 0.0))
        return result

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if self._kind(pod, "PreBind") == "forbidden":
            # The scheduler may not patch nodes: the API answers 403 and this raises.
            await self._handle.api.patch_object(
                "nodes", "", node_name, {"metadata": {"labels": {"faulty": "was-here"}}}
            )
            return Status()
        result: Status = self._status(pod, "PreBind", Status())
        return result

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        result: Status = self._status(pod, "Bind", Status.skip())
        return result

    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._status(pod, "PostBind", None)


SPEC = PluginSpec(name=NAME, plugin_class=Faulty)

BREAK_LOOP = "faults.example.com/break-loop"


class LoopBreaker:
    """Breaks the scheduler itself, not a plugin call: once a pod annotated `BREAK_LOOP` is
    bound, the scheduling queue's next pop raises, as a bug in the queue would."""

    name = "LoopBreaker"

    def __init__(self, args: None, handle: Handle) -> None:
        self._handle = handle

    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if BREAK_LOOP not in pod.annotations:
            return
        # Reaches past the public API on purpose: the point is to corrupt the machinery.
        queue = getattr(self._handle, "queue")  # noqa: B009

        async def broken_pop() -> None:
            raise RuntimeError("the scheduling queue is corrupt")

        queue.pop_wait = broken_pop


BREAKER_SPEC = PluginSpec(name="LoopBreaker", plugin_class=LoopBreaker)
