"""A pod's nomination holds room on a node for pods of lower or equal priority: when it goes,
those pods are offered the change, as upstream offers them an AssignedPodDelete. Only a
PostFilter result that overrides makes one."""

from __future__ import annotations

from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeStatusReader
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import PostFilterResult
from scheduler.framework import Status
from scheduler.framework.plugins import NominatingMode
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

# No PostFilter: a failed attempt clears the pod's nomination instead of preempting.
CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"postFilter": {"disabled": [{"name": "*"}]}},
        }
    ]
}


async def test_a_cleared_nomination_offers_its_room_to_lower_priority_pods() -> None:
    async with Harness(CONFIG) as h:
        node = make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").dict()
        filler = make_pod("filler").node("n1").req(cpu="2").phase("Running").dict()
        h.create([node, filler, make_pod("low").req(cpu="1").priority(5).dict()])
        await h.schedule_active()
        assert h.scheduler.queue.locate("default/low") == "unschedulable"
        vip = make_pod("vip").req(cpu="1").priority(10).nominated("n1").dict()
        h.create([vip])
        await h.schedule_active()
        await h.quiesce()
        # vip failed too, and its nomination was cleared: low may now count n1 without it.
        assert h.pod("default", "vip")["status"].get("nominatedNodeName") is None
        assert h.scheduler.queue.locate("default/low") == "backoff"


class NoopNaming:
    """A PostFilter that answers Noop and yet names a node, as an out-of-tree one may."""

    name = "NoopNaming"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        return PostFilterResult("n1", NominatingMode.NOOP), Status()


async def test_a_noop_post_filter_result_nominates_no_node_even_when_it_names_one() -> None:
    noop_config = {
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "postFilter": {
                        "disabled": [{"name": "*"}],
                        "enabled": [{"name": "NoopNaming"}],
                    }
                },
            }
        ]
    }
    spec = PluginSpec(name="NoopNaming", plugin_class=NoopNaming)
    async with Harness(noop_config, extra_plugins=[spec]) as h:
        node = make_node("n1").capacity(cpu="1", memory="8Gi", pods="10").dict()
        h.create([node, make_pod("big").req(cpu="2").dict()])
        await h.schedule_active()
        await h.quiesce()
        # Upstream reads a Noop result's mode, never its node: nothing is written or held.
        assert h.pod("default", "big")["status"].get("nominatedNodeName") is None
        assert h.scheduler.queue.nominated_pods_for_node("n1") == []
