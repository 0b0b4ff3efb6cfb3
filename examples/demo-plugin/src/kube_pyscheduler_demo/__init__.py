"""DemoPlugin: filter to nodes labelled demo-ok=true and give each of them the same score."""

from __future__ import annotations

from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status

DEMO_LABEL = "demo-ok"


class DemoPlugin:
    name = "DemoPlugin"

    def __init__(self, args: None, handle: Handle) -> None:
        self._handle = handle

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is not None and node.labels.get(DEMO_LABEL) == "true":
            return Status()
        return Status.unschedulable("node not demo-ok")

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return 50, Status()

    def score_extensions(self) -> None:
        return None


SPEC = PluginSpec(name="DemoPlugin", plugin_class=DemoPlugin)
