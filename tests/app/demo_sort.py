"""A second QueueSort plugin, used to check that profiles must agree on one."""

from __future__ import annotations

from scheduler.framework import Handle
from scheduler.framework import PluginSpec
from scheduler.framework import QueuedPodInfo


class DemoSort:
    name = "DemoSort"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.pod.name < b.pod.name


SPEC = PluginSpec(name="DemoSort", plugin_class=DemoSort)
