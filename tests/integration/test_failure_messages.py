"""FailedScheduling Events and PodScheduled conditions, end to end, in upstream's words."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework import CycleState
from scheduler.framework import FilterBatch
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import Status
from scheduler.framework.status import Code
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.storage_builders import claim_volume
from tests.integration.harness import Harness

Case = tuple[list[dict[str, Any]], dict[str, Any], str]

CASES: dict[str, Case] = {
    "taint-and-cpu": (
        [
            make_node("gpu")
            .capacity(cpu="8", memory="8Gi", pods="10")
            .taint("dedicated", "gpu")
            .dict(),
            make_node("small-1").capacity(cpu="1", memory="8Gi", pods="10").dict(),
            make_node("small-2").capacity(cpu="1", memory="8Gi", pods="10").dict(),
        ],
        make_pod("p").req(cpu="2").dict(),
        # 2 CPUs exceed the small nodes' whole allocatable: preemption cannot help anywhere.
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    ),
    "several-reasons-per-node": (
        [make_node(f"n{i}").capacity(cpu="1", memory="1Gi", pods="10").dict() for i in range(2)],
        make_pod("p").req(cpu="2", memory="2Gi").dict(),
        "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory. "
        "no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    ),
    "selector-cordon-ports": (
        [
            make_node("a").label("disk", "ssd").unschedulable().dict(),
            make_node("b").label("disk", "hdd").dict(),
            make_node("c").label("disk", "ssd").dict(),
        ],
        make_pod("p").node_selector(disk="ssd").host_port(8080).dict(),
        # c is free, so schedule something holding the port there first (see the test).
        "",
    ),
    "too-many-pods": (
        [make_node("full").capacity(cpu="4", memory="8Gi", pods="0").dict()],
        make_pod("p").dict(),
        # A full node could take the pod if something left: preemption looks, finds no victim.
        "0/1 nodes are available: 1 Too many pods. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    "missing-claim": (
        [make_node("a").dict(), make_node("b").dict()],
        make_pod("p").spec(volumes=[claim_volume("data")]).dict(),
        # VolumeBinding's PreFilter rejects the pod before DynamicResources' PreFilter runs, so
        # DynamicResources' PostFilter finds no state of its own: its error ends the chain
        # before preemption and is the whole PostFilter part of the text.
        '0/2 nodes are available: persistentvolumeclaim "data" not found. not found',
    ),
    "no-nodes": ([], make_pod("p").dict(), "no nodes available to schedule pods"),
    "node-name": (
        [make_node("a").dict(), make_node("b").dict()],
        make_pod("p").spec(nodeName="").dict(),
        "",
    ),
}


@pytest.mark.parametrize("case", [k for k, v in CASES.items() if v[2]], ids=str)
async def test_failed_scheduling_text(case: str) -> None:
    nodes, pod, expected = CASES[case]
    async with Harness() as h:
        h.create([*nodes, pod])
        await h.schedule_active()
        assert h.node_of("default", "p") is None
        assert h.event_notes("default", "p", "FailedScheduling") == [expected]
        condition = next(
            c for c in h.pod("default", "p")["status"]["conditions"] if c["type"] == "PodScheduled"
        )
        assert condition["status"] == "False"
        assert condition["reason"] == "Unschedulable"
        assert condition["message"] == expected


async def test_histogram_mixes_plugins_across_nodes() -> None:
    async with Harness() as h:
        h.create(
            [
                make_node("a").label("disk", "ssd").unschedulable().dict(),
                make_node("b").label("disk", "hdd").dict(),
                make_node("c").label("disk", "ssd").dict(),
                make_pod("holder").node("c").host_port(8080).dict(),
                make_pod("p").node_selector(disk="ssd").host_port(8080).dict(),
            ]
        )
        await h.schedule_active()
        assert h.event_notes("default", "p", "FailedScheduling") == [
            "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod "
            "ports, 1 node(s) didn't match Pod's node affinity/selector, "
            "1 node(s) were unschedulable. "
            "no new claims to deallocate, preemption: 0/3 nodes are available: "
            "1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling."
        ]


async def test_scheduled_event_and_binding() -> None:
    async with Harness() as h:
        h.create([make_node("only").dict(), make_pod("p").req(cpu="100m").dict()])
        await h.schedule_active()
        assert h.node_of("default", "p") == "only"
        assert h.event_notes("default", "p", "Scheduled") == [
            "Successfully assigned default/p to only"
        ]
        event = h.sim.events("default/p")[0]
        assert (event["type"], event["action"], event["reportingController"]) == (
            "Normal",
            "Binding",
            "default-scheduler",
        )


async def test_unschedulable_pod_is_requeued_by_a_node_that_fits() -> None:
    async with Harness() as h:
        h.create([make_node("small").capacity(cpu="1", memory="1Gi", pods="10").dict()])
        h.create([make_pod("p").req(cpu="2").dict()])
        await h.schedule_active()
        assert h.scheduler.queue.locate("default/p") == "unschedulable"
        # A node too small does not help; one that fits does, without waiting for a flush.
        h.create([make_node("also-small").capacity(cpu="1", memory="1Gi", pods="10").dict()])
        await h.quiesce()
        assert h.scheduler.queue.locate("default/p") == "unschedulable"
        h.create([make_node("big").capacity(cpu="4", memory="8Gi", pods="10").dict()])
        await h.quiesce()
        assert h.scheduler.queue.locate("default/p") in ("active", "backoff")
        h.clock.advance(10)
        h.scheduler.queue.flush_backoff_completed()
        await h.schedule_active()
        assert h.node_of("default", "p") == "big"


def _harness_with(plugin_class: type, point: str) -> Harness:
    """The default profile with `plugin_class` (an out-of-tree plugin) enabled at `point`."""
    name = plugin_class.__name__
    plugins = {point: {"enabled": [{"name": name}]}}
    config = {"profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}
    return Harness(config, extra_plugins=[PluginSpec(name=name, plugin_class=plugin_class)])


class RefusesAtPreBind:
    """Rejects every pod at PreBind, as an out-of-tree plugin may (no in-tree one does)."""

    name = "RefusesAtPreBind"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status.unschedulable("the volume is not ready")


async def test_a_rejection_after_permit_is_reported_as_it_is_and_retried_after_backoff() -> None:
    """Past Permit upstream no longer counts the pod unschedulable on the node: the text is
    the plugin's own, and no rejector waits for an event: the pod goes to backoff."""
    async with _harness_with(RefusesAtPreBind, "preBind") as h:
        h.create([make_node("n1").dict(), make_pod("p").dict()])
        await h.schedule_active()
        await h.quiesce()
        assert h.event_notes("default", "p", "FailedScheduling") == ["the volume is not ready"]
        assert h.scheduled_message("default", "p") == "the volume is not ready"
        assert h.scheduler.queue.locate("default/p") == "backoff"


class RefusesInJapanese:
    """A Filter plugin whose reason is long and not ASCII: three bytes a character."""

    name = "RefusesInJapanese"
    reason = "ノードの準備ができていません" * 30

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.unschedulable(self.reason)


async def test_a_note_over_the_api_limit_in_bytes_is_cut_and_the_event_still_written() -> None:
    """The API server refuses a note of more than 1024 bytes; this one has fewer characters
    than that but more bytes, so counting characters would lose the Event."""
    async with _harness_with(RefusesInJapanese, "filter") as h:
        h.create([make_node("n1").dict(), make_pod("p").dict()])
        await h.schedule_active()
        await h.quiesce()
        full = f"0/1 nodes are available: 1 {RefusesInJapanese.reason}."  # PostFilter adds more
        assert len(full) < 1024 < len(full.encode())
        [note] = h.event_notes("default", "p", "FailedScheduling")
        assert note.endswith(" ...")
        assert 1024 - 3 <= len(note.encode()) <= 1024  # cut between characters
        assert full.startswith(note.removesuffix(" ..."))
        # The condition is not limited: it keeps the whole text (and PostFilter's after it).
        assert h.scheduled_message("default", "p").startswith(full)


class SkipsInBatch:
    """A vectorized Filter that answers Skip, which a Filter may not: upstream makes that an
    Error of the attempt, not a rejection of the node."""

    name = "SkipsInBatch"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status(Code.SKIP, "nothing to check")

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        return FilterBatch.uniform(Status(Code.SKIP, "nothing to check"), len(rows))


async def test_a_batch_filter_answering_skip_fails_the_attempt_with_an_error() -> None:
    async with _harness_with(SkipsInBatch, "filter") as h:
        h.create([make_node("n1").dict(), make_pod("p").dict()])
        await h.schedule_active()
        await h.quiesce()
        expected = 'running "SkipsInBatch" filter plugin: nothing to check'
        assert h.event_notes("default", "p", "FailedScheduling") == [expected]
        assert h.scheduled_message("default", "p") == expected
        assert h.scheduler.queue.locate("default/p") == "backoff"
