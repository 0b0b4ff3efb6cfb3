"""A pod with a nominated node tries that node alone first, as upstream's
evaluateNominatedNode: an Error there is logged and the search over every node decides."""

from __future__ import annotations

from typing import ClassVar

from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness


class FlakyOnce:
    """Fails with an Error the first time it filters node n1, then passes every node."""

    name = "FlakyOnce"
    seen: ClassVar[list[str]] = []

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        FlakyOnce.seen.append(node_info.name)
        if node_info.name == "n1" and FlakyOnce.seen.count("n1") == 1:
            return Status.from_error("n1 is not answering")
        return Status()


CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"filter": {"enabled": [{"name": "FlakyOnce"}]}},
        }
    ]
}


async def test_an_error_on_the_nominated_node_falls_back_to_the_whole_search() -> None:
    FlakyOnce.seen.clear()
    spec = PluginSpec(name="FlakyOnce", plugin_class=FlakyOnce)
    async with Harness(CONFIG, extra_plugins=[spec]) as h:
        nodes = [make_node(n).dict() for n in ("n1", "n2")]
        h.create([*nodes, make_pod("p").nominated("n1").dict()])
        assert await h.schedule_active() == 1
        # The nominated node alone first; its Error sent the attempt on to every node.
        assert FlakyOnce.seen[0] == "n1"
        assert sorted(FlakyOnce.seen[1:]) == ["n1", "n2"]
        assert h.node_of("default", "p") in {"n1", "n2"}
        assert h.event_notes("default", "p", "FailedScheduling") == []
