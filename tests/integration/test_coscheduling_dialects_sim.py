"""Every PodGroup dialect feeds the same gang scheduling; a missing group is waited for."""

from __future__ import annotations

from typing import Any

from scheduler.testing import make_pod
from tests.integration.gangs import COSCHEDULING_CONFIG
from tests.integration.gangs import nodes
from tests.integration.gangs import pod_group
from tests.integration.gangs import run_for
from tests.integration.harness import Harness


def _bound(h: Harness, prefix: str) -> int:
    return sum(
        1
        for pod in h.sim.objects("pods")
        if pod["metadata"]["name"].startswith(prefix) and (pod.get("spec") or {}).get("nodeName")
    )


def _sigs_group(name: str, min_member: int) -> dict[str, Any]:
    group = pod_group(name, min_member)
    group["apiVersion"] = "scheduling.sigs.k8s.io/v1alpha1"
    return group


def _native_group(name: str, min_count: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


async def test_older_sigs_dialect_label_and_group() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        pods = [
            make_pod(f"old-{i}")
            .label("pod-group.scheduling.sigs.k8s.io", "old")
            .req(cpu="1")
            .dict()
            for i in range(3)
        ]
        h.create([*nodes(1), _sigs_group("old", 3), *pods])
        await run_for(h, 30)
        # Room for 2 of the 3: none placed.
        assert _bound(h, "old-") == 0
        h.create([nodes(2)[1]])
        await run_for(h, 30)
        assert _bound(h, "old-") == 3


async def test_native_dialect_links_by_scheduling_group() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        pods = [
            make_pod(f"w-{i}").spec(schedulingGroup={"podGroupName": "native"}).req(cpu="1").dict()
            for i in range(4)
        ]
        h.create([*nodes(1), _native_group("native", 4), *pods])
        await run_for(h, 10)
        assert _bound(h, "w-") == 0
        notes = [
            n for i in range(4) for n in h.event_notes("default", f"w-{i}", "FailedScheduling")
        ]
        rejected = "PodGroup default/native gets rejected due to Pod w-2 is unschedulable even"
        assert any(rejected in n for n in notes), notes


async def test_pod_naming_a_missing_group_waits_and_says_so() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        pods = [
            make_pod(f"m-{i}").label("scheduling.x-k8s.io/pod-group", "later").req(cpu="1").dict()
            for i in range(2)
        ]
        h.create([*nodes(1), *pods])
        await h.schedule_active()
        # Our PreFilter text, then upstream's PostFilter text for a group it cannot find.
        assert h.event_notes("default", "m-0", "FailedScheduling") == [
            '0/1 nodes are available: PodGroup "default/later" does not exist; waiting for it to '
            "be created. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
            "scheduling., can not find pod group"
        ]
        assert h.scheduler.queue.locate("default/m-0") == "unschedulable"
        # Creating the group is the event that brings its members back.
        h.create([pod_group("later", 2)])
        await h.schedule_active()
        await run_for(h, 5)
        assert _bound(h, "m-") == 2


async def test_quorum_gap_and_gated_members_are_reported() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        pods = [
            make_pod("q-0").label("scheduling.x-k8s.io/pod-group", "q").dict(),
            make_pod("q-1").label("scheduling.x-k8s.io/pod-group", "q").scheduling_gate("x").dict(),
        ]
        h.create([*nodes(1), pod_group("q", 3), *pods])
        await h.schedule_active()
        assert h.event_notes("default", "q-0", "FailedScheduling") == [
            "0/1 nodes are available: pre-filter pod q-0 cannot find enough sibling pods, current "
            "pods number: 2, minMember of group: 3. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
            "scheduling., PodGroup default/q gets rejected due to Pod q-0 is unschedulable even "
            "after PostFilter"
        ]
        h.create([make_pod("q-2").label("scheduling.x-k8s.io/pod-group", "q").dict()])
        await run_for(h, 5)
        # The condition carries the latest word (the Event, correlated, keeps its first note).
        notes = [h.scheduled_message("default", "q-0")]
        assert notes[-1].startswith(
            "0/1 nodes are available: pre-filter pod q-0 cannot find enough ungated sibling pods, "
            "current ungated pods number: 2, minMember of group: 3."
        ), notes
