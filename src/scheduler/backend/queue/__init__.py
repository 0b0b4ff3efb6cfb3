"""The scheduling queue: activeQ, backoffQ, the unschedulable pool, QueueingHints, nominator."""

from scheduler.backend.queue.backoff import BackoffPolicy
from scheduler.backend.queue.cluster_events import FORCE_ACTIVATE_EVENT
from scheduler.backend.queue.cluster_events import UNSCHEDULABLE_TIMEOUT_EVENT
from scheduler.backend.queue.cluster_events import event_label
from scheduler.backend.queue.cluster_events import labelled
from scheduler.backend.queue.cluster_events import node_update_events
from scheduler.backend.queue.cluster_events import pod_update_events
from scheduler.backend.queue.cluster_events import resource_label
from scheduler.backend.queue.errors import QueueClosed
from scheduler.backend.queue.flush_loop import run_queue_flushes
from scheduler.backend.queue.hints import HintRegistrations
from scheduler.backend.queue.hints import QueueingStrategy
from scheduler.backend.queue.observer import QueueObserver
from scheduler.backend.queue.scheduling_queue import DEFAULT_MAX_IN_UNSCHEDULABLE
from scheduler.backend.queue.scheduling_queue import SchedulingQueue

__all__ = [
    "DEFAULT_MAX_IN_UNSCHEDULABLE",
    "FORCE_ACTIVATE_EVENT",
    "UNSCHEDULABLE_TIMEOUT_EVENT",
    "BackoffPolicy",
    "HintRegistrations",
    "QueueClosed",
    "QueueObserver",
    "QueueingStrategy",
    "SchedulingQueue",
    "event_label",
    "labelled",
    "node_update_events",
    "pod_update_events",
    "resource_label",
    "run_queue_flushes",
]
