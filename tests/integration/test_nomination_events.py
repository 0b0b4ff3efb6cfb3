"""A pod's nomination holds room on a node for pods of lower or equal priority: when it goes,
those pods are offered the change, as upstream offers them an AssignedPodDelete."""

from __future__ import annotations

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
