"""PrioritySort: the default QueueSort, higher priority first, then first come first served."""

from __future__ import annotations

from scheduler.framework import Handle
from scheduler.framework import PluginArgs
from scheduler.framework import QueuedPodInfo


class PrioritySort:
    name = "PrioritySort"

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args, handle  # the plugin has no arguments and needs nothing from the scheduler

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """True if `a` should be popped before `b`.

        A pod without spec.priority counts as priority 0 (the parsed Pod already says so).
        """
        if a.pod.priority != b.pod.priority:
            return a.pod.priority > b.pod.priority
        return a.timestamp < b.timestamp
