"""Hooks the queue calls when a pod enters a sub-queue; the metrics layer implements them."""

from __future__ import annotations

from typing import Protocol

ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"
IN_FLIGHT = "in-flight"

POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
"""Event label of a pod that moves from backoffQ to activeQ because activeQ ran dry."""


class QueueObserver(Protocol):
    def pod_incoming(self, queue: str, event: str) -> None:
        """A pod entered `queue` (active, backoff or unschedulable: the pool, where gated pods
        wait too) because of `event`."""

    def queueing_hint_duration(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        """A plugin's QueueingHint answered `hint` (Queue, QueueSkip or Error) to `event`."""


class NullObserver:
    def pod_incoming(self, queue: str, event: str) -> None:
        return None

    def queueing_hint_duration(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        return None
