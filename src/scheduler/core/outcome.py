"""One scheduling attempt and what it concluded, handed from the scheduling cycle to the
binding cycle and to the failure handler."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis
from scheduler.framework.diagnosis import single_node_fit_error
from scheduler.framework.plugins import PodSignature
from scheduler.framework.plugins import PostFilterResult
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.runtime.framework import Framework


@dataclass(slots=True)
class BatchTurn:
    """An attempt's part in opportunistic batching: the pod's signature, the cycle it was
    popped in, and the node hint it was given ("" for none)."""

    signature: PodSignature | None
    cycle: int
    hint: str = ""


@dataclass(slots=True)
class Attempt:
    """One scheduling attempt of one pod, from pop to bind or failure."""

    framework: Framework
    state: CycleState
    info: QueuedPodInfo
    cycle: int
    started: float
    bound: bool = False
    # The node the binding cycle nominated the pod to before Permit's wait or PreBind ("" if
    # it did not): the API has it before the informer does.
    binding_nomination: str = ""
    # None when the OpportunisticBatching gate is off.
    batch: BatchTurn | None = None


@dataclass(slots=True)
class Placement:
    node_name: str
    evaluated_nodes: int
    feasible_nodes: int


@dataclass(slots=True)
class Failure:
    """A failed attempt: the status, upstream's message for it, and who rejected the pod."""

    status: Status
    message: str
    diagnosis: Diagnosis | None = None
    post_filter: PostFilterResult | None = None
    clear_nomination: bool = True
    # Whether the status's plugin counts as the pod's rejector (its events requeue the pod).
    names_rejector: bool = True

    @classmethod
    def at_chosen_node(cls, status: Status) -> Failure:
        """A failure at Reserve or Permit, after a node was chosen: rejections are reported
        against that one node, errors as they are."""
        if status.is_rejected:
            return cls(status, single_node_fit_error(status))
        return cls(status, status.message())

    @classmethod
    def while_binding(cls, status: Status) -> Failure:
        """A failure at PreBindPreFlight, PreBind or Bind. Upstream counts a pod unschedulable
        only up to Permit: past it, even a rejection is reported as it is and names no
        rejector, so the pod is retried after backoff rather than waiting for an event."""
        return cls(status, status.message(), names_rejector=False)

    @property
    def unschedulable_plugins(self) -> set[str]:
        if self.diagnosis is not None:
            return set(self.diagnosis.unschedulable_plugins)
        rejected = self.status.is_rejected and self.status.code is not Code.PENDING
        if self.names_rejector and rejected and self.status.plugin:
            return {self.status.plugin}
        return set()

    @property
    def pending_plugins(self) -> set[str]:
        if self.diagnosis is not None:
            return set(self.diagnosis.pending_plugins)
        if self.names_rejector and self.status.code is Code.PENDING and self.status.plugin:
            return {self.status.plugin}
        return set()
