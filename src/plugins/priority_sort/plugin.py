"""PrioritySort: the default QueueSort, higher priority first, then first come first served."""

from __future__ import annotations

from plugins.helpers.plugin_bases import NoArgsPlugin
from scheduler.framework import QueuedPodInfo


class PrioritySort(NoArgsPlugin):
    name = "PrioritySort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """True if `a` should be popped before `b`.

        A pod without spec.priority counts as priority 0 (the parsed Pod already says so).
        """
        if a.pod.priority != b.pod.priority:
            return a.pod.priority > b.pod.priority
        return a.timestamp < b.timestamp

    def sort_key(self, info: QueuedPodInfo) -> tuple[int, float]:
        """The order of `less` as a value: higher priority first, then the earlier arrival."""
        return (-info.pod.priority, info.timestamp)
