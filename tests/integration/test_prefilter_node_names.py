"""Pods whose required node affinity names nodes through `matchFields` on `metadata.name`.

NodeAffinity's PreFilter narrows the search to the named nodes. Names of nodes that do not exist
are dropped; the nodes left out answer `didn't satisfy plugin(s) [NodeAffinity]`, and the named
nodes still go through Filter with the rest of the selector.
"""

from __future__ import annotations

from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

NOT_HELPFUL = "Preemption is not helpful for scheduling"


def names_term(*names: str, **labels: str) -> dict[str, Any]:
    term: dict[str, Any] = {
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": list(names)}]
    }
    if labels:
        term["matchExpressions"] = [
            {"key": key, "operator": "In", "values": [value]} for key, value in labels.items()
        ]
    return term


def nodes() -> list[dict[str, Any]]:
    return [
        make_node("a").label("disk", "hdd").dict(),
        make_node("b").label("disk", "ssd").dict(),
        make_node("c").label("disk", "ssd").dict(),
    ]


async def test_only_missing_nodes_named_fails_at_once_and_scheduling_goes_on() -> None:
    pinned = make_pod("pinned").node_affinity_term(names_term("deleted-node")).dict()
    async with Harness() as h:
        h.create([*nodes(), pinned, make_pod("plain").dict()])
        assert await h.schedule_active() == 2
        assert h.node_of("default", "pinned") is None
        assert h.event_notes("default", "pinned", "FailedScheduling") == [
            "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
            f"no new claims to deallocate, preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}."
        ]
        assert h.node_of("default", "plain") is not None
        # Later pods are scheduled too: the failed attempt left the loop running.
        h.create([make_pod("later").dict()])
        assert await h.schedule_active() == 1
        assert h.node_of("default", "later") is not None


async def test_named_node_failing_the_rest_of_the_term_is_rejected_by_filter() -> None:
    pod = make_pod("p").node_affinity_term(names_term("a", "gone", disk="ssd")).dict()
    async with Harness() as h:
        h.create([*nodes(), pod])
        await h.schedule_active()
        assert h.node_of("default", "p") is None
        assert h.event_notes("default", "p", "FailedScheduling") == [
            "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
            "2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
            f"no new claims to deallocate, preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}."
        ]


async def test_existing_named_node_among_missing_ones_is_chosen() -> None:
    pod = make_pod("p").node_affinity_term(names_term("gone", "c", disk="ssd")).dict()
    async with Harness() as h:
        h.create([*nodes(), pod])
        await h.schedule_active()
        assert h.node_of("default", "p") == "c"


async def test_a_term_without_names_leaves_every_node_possible() -> None:
    pod = (
        make_pod("p")
        .node_affinity_term(names_term("gone"))
        .node_affinity_term(
            {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["hdd"]}]}
        )
        .dict()
    )
    async with Harness() as h:
        h.create([*nodes(), pod])
        await h.schedule_active()
        assert h.node_of("default", "p") == "a"


async def test_a_pod_waiting_for_the_node_it_names_is_retried_when_that_node_arrives() -> None:
    """NodeAffinity narrowed the nodes, so it counts among the pod's rejectors and its Node/Add
    hint requeues the pod (a DaemonSet pod created before the scheduler sees its node)."""
    pinned = make_pod("pinned").node_affinity_term(names_term("late")).dict()
    async with Harness() as h:
        h.create([*nodes(), pinned])
        await h.schedule_active()
        assert h.scheduler.queue.locate("default/pinned") == "unschedulable"
        h.create([make_node("late").dict()])
        await h.quiesce()
        assert h.scheduler.queue.locate("default/pinned") == "backoff"
        h.clock.advance(10)
        h.scheduler.queue.flush_backoff_completed()
        assert await h.schedule_active() == 1
        assert h.node_of("default", "pinned") == "late"
