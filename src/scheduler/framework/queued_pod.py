"""A pod's life in the scheduling queue."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from scheduler.objects.pod import Pod


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """What the queue knows about a pending pod; QueueSort plugins compare two of these."""

    pod: Pod
    timestamp: float  # when the pod was last added to the queue (clock seconds)
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    backoff_expiration: float | None = None
    # Set when the periodic flush moved the pod out of the unschedulable pool, cleared when an
    # attempt returns it: a pod bound with it set was stranded by a missing queueing hint.
    flushed_from_unschedulable: bool = False

    @property
    def key(self) -> str:
        return self.pod.key

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)
