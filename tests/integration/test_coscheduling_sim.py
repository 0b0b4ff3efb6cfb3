"""Gang scheduling end to end in the in-memory cluster, on a fake clock."""

from __future__ import annotations

import random
import re
from typing import Any

from tests.integration.gangs import COSCHEDULING_CONFIG
from tests.integration.gangs import bound_count
from tests.integration.gangs import gang_pods
from tests.integration.gangs import nodes
from tests.integration.gangs import pod_group
from tests.integration.gangs import run_for
from tests.integration.harness import Harness


def _sample(text: str, family: str, result: str) -> str:
    """The value of the family's series for `result` in the default profile."""
    pattern = rf'^{family}{{profile="default-scheduler",result="{result}"}} (\S+)$'
    found = re.search(pattern, text, re.MULTILINE)
    assert found is not None, f"no {family} series for {result}"
    return found.group(1)


async def test_gang_that_cannot_fit_places_none_and_reports_the_gap() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        # Three nodes of 2 CPUs: room for 6 one-CPU pods; the gang needs all 8.
        h.create([*nodes(3), pod_group("train", 8), *gang_pods("train", 8)])
        await run_for(h, 120)
        text = h.scheduler.metrics.render().decode()
        family = "scheduler_podgroup_schedule_attempts_total"
        assert float(_sample(text, family, "unschedulable")) > 0
        assert float(_sample(text, family, "scheduled")) == 0
        # Bindings are permanent: none at the end means none ever. Members may be waiting at
        # Permit in the attempt under way, holding places only in the scheduler's cache.
        assert bound_count(h, "train") == 0
        notes = [
            n for i in range(8) for n in h.event_notes("default", f"train-{i}", "FailedScheduling")
        ]
        # In upstream's words: the member that fits nowhere, and the members it turned away
        # from Permit.
        rejected = re.compile(
            r"PodGroup default/train gets rejected due to Pod train-\d is unschedulable even "
            r"after PostFilter$"
        )
        assert any(rejected.search(n) for n in notes), notes
        assert "0/1 nodes are available: 1 optimistic rejection in PostFilter." in notes


async def test_gang_with_room_is_placed_within_one_permit_window() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        h.create([*nodes(4), pod_group("train", 8), *gang_pods("train", 8)])
        started = h.clock.now()
        await h.schedule_active()
        # Every member was tried in the same pass; none had to wait out a timeout.
        assert bound_count(h, "train") == 8
        assert h.clock.now() == started
        assert len(h.scheduler.waiting_pods) == 0
        text = h.scheduler.metrics.render().decode()
        assert (
            'scheduler_podgroup_schedule_attempts_total{profile="default-scheduler",'
            'result="scheduled"} 1.0' in text
        )
        assert 'scheduler_podgroups_waiting_at_permit{profile="default-scheduler"} 0.0' in text


async def _interleaved_run(seed: int) -> tuple[int, int]:
    """Two gangs of 6 arrive in a seeded, interleaved order on room for 8; scheduling steps and
    time passing are mixed in between arrivals. Checks after every step that no gang is ever
    partly bound, and returns how many of each ended bound."""
    rng = random.Random(seed)
    async with Harness(COSCHEDULING_CONFIG, seed=seed) as h:
        h.create(nodes(4))
        arrivals = [pod_group("a", 6), pod_group("b", 6, created="2026-01-01T00:00:01Z")]
        pods = gang_pods("a", 6) + gang_pods("b", 6)
        rng.shuffle(pods)
        arrivals += pods
        while arrivals:
            batch = rng.randint(1, 4)
            h.create(arrivals[:batch])
            del arrivals[:batch]
            await h.quiesce()
            for _ in range(rng.randint(0, 3)):
                info = h.scheduler.queue.pop()
                if info is None:
                    break
                h.scheduler.schedule_one(info)
                await h.quiesce()
            if rng.random() < 0.3:
                h.clock.advance(rng.choice([0.5, 1.0, 5.0]))
                await h.quiesce()
            assert {bound_count(h, "a"), bound_count(h, "b")} <= {0, 6}
        # Once one gang is bound the other cannot fit any more (2 free places for 6).
        for _ in range(40):
            if 6 in (bound_count(h, "a"), bound_count(h, "b")):
                break
            await run_for(h, 5)
            assert {bound_count(h, "a"), bound_count(h, "b")} <= {0, 6}
        await run_for(h, 5)
        return bound_count(h, "a"), bound_count(h, "b")


async def test_two_gangs_competing_never_end_partly_placed() -> None:
    outcomes = [await _interleaved_run(seed) for seed in range(200)]
    for seed, (a, b) in enumerate(outcomes):
        assert sorted((a, b)) == [0, 6], f"seed {seed}: a={a} b={b}"


async def test_member_arriving_after_the_timeout_rejects_the_group_which_is_retried() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        h.create([*nodes(2), pod_group("job", 4, timeout=10), *gang_pods("job", 4)])
        await h.quiesce()
        for _ in range(3):
            info = h.scheduler.queue.pop()
            assert info is not None
            h.scheduler.schedule_one(info)
            await h.quiesce()
        assert len(h.scheduler.waiting_pods) == 3
        # The fourth member's turn comes only after the group's 10 s window has closed.
        h.clock.advance(10)
        await h.quiesce()
        assert len(h.scheduler.waiting_pods) == 0
        assert bound_count(h, "job") == 0
        assert h.scheduler.cache.table.requested_of("cpu").tolist() == [0, 0]
        notes = {
            f"job-{i}": h.event_notes("default", f"job-{i}", "FailedScheduling") for i in range(3)
        }
        assert all(len(n) == 1 for n in notes.values()), notes
        flat = [n for ns in notes.values() for n in ns]
        # The members started waiting at the same fake instant, so their timers fire together.
        assert all("timeout after waiting 10s at plugin Coscheduling" in n for n in flat), flat
        await run_for(h, 60)
        assert bound_count(h, "job") == 4


async def test_min_resources_above_the_free_cluster_rejects_in_prefilter() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        h.create(
            [*nodes(4), pod_group("big", 2, min_resources={"cpu": "100"}), *gang_pods("big", 2)]
        )
        await h.schedule_active()
        assert len(h.scheduler.waiting_pods) == 0
        assert bound_count(h, "big") == 0
        for name in ("big-0", "big-1"):
            notes = h.event_notes("default", name, "FailedScheduling")
            # Upstream's gap, as Go prints the ResourceList: 92 CPUs short.
            assert notes == [
                "0/4 nodes are available: resource gap: map[cpu:{{92000 -3} {<nil>}  DecimalSI}]. "
                "no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption "
                "is not helpful for scheduling., PodGroup default/big gets rejected due to Pod "
                f"{name} is unschedulable even after PostFilter"
            ], notes


def _group_status(h: Harness, name: str) -> dict[str, object]:
    group = next(g for g in h.sim.objects("podgroups") if g["metadata"]["name"] == name)
    return dict(group.get("status") or {})


async def test_gang_completed_by_its_last_member_binds_at_once() -> None:
    """Turned away while members were missing, the group has not failed: the first member to
    wait brings its siblings out of their backoff, so all bind without time passing."""
    async with Harness(COSCHEDULING_CONFIG) as h:
        h.create([*nodes(2), pod_group("job", 4), *gang_pods("job", 3)])
        await h.schedule_active()
        assert all(h.event_notes("default", f"job-{i}", "FailedScheduling") for i in range(3))
        h.create([gang_pods("job", 4)[3]])
        await h.schedule_active()
        assert bound_count(h, "job") == 4


async def test_pod_group_status_names_its_owner() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        members = gang_pods("job", 2)
        for member in members:
            owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "u-1"}
            member["metadata"]["ownerReferences"] = [owner]
        h.create([*nodes(1), pod_group("job", 2), *members])
        await run_for(h, 2)
        assert _group_status(h, "job")["occupiedBy"] == "default/train"


async def test_pod_group_status_follows_its_members() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        h.create([*nodes(2), pod_group("job", 4), *gang_pods("job", 3)])
        await run_for(h, 2)
        assert _group_status(h, "job") == {"phase": "Pending", "running": 0}
        h.create([gang_pods("job", 4)[3]])
        await run_for(h, 2)
        status = _group_status(h, "job")
        assert status["phase"] == "Scheduling"
        # Stamped by the first status pass after the fourth member appeared (t=2 s).
        assert status["scheduleStartTime"] == "2026-01-01T00:00:03Z"
        assert bound_count(h, "job") == 4


def _pod_group_events(h: Harness, name: str) -> list[dict[str, Any]]:
    return [
        e
        for e in h.sim.events(f"default/{name}")
        if e["regarding"]["kind"] == "PodGroup" and e["reason"] == "WaitingForMembers"
    ]


async def test_pod_group_with_members_missing_says_why_once() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        h.create([*nodes(2), pod_group("job", 4), *gang_pods("job", 2)])
        await run_for(h, 3)
        [event] = _pod_group_events(h, "job")
        assert event["type"] == "Warning"
        assert event["note"] == (
            "fewer pods of the group exist than its minMember (4); none of them is scheduled "
            "until 4 exist"
        )
        assert event["regarding"]["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
        h.create([gang_pods("job", 3)[2]])
        await run_for(h, 3)
        # Still waiting: the status loop does not say it again on every pass.
        assert len(_pod_group_events(h, "job")) == 1
        assert "series" not in _pod_group_events(h, "job")[0]
        h.create([gang_pods("job", 4)[3]])
        await run_for(h, 3)
        assert bound_count(h, "job") == 4
        assert len(_pod_group_events(h, "job")) == 1


async def test_a_member_that_fits_nowhere_does_not_keep_its_siblings_waiting() -> None:
    async with Harness(COSCHEDULING_CONFIG) as h:
        pods = gang_pods("g", 3)
        pods[2]["spec"]["nodeSelector"] = {"pool": "gpu"}  # no node has it yet
        h.create([*nodes(3), pod_group("g", 3), *pods])
        waiting_at_permit = []
        for _ in range(300):
            await run_for(h, 1)
            waiting_at_permit.append(len(h.scheduler.waiting_pods))
        # The first round turned the group away. The siblings giving their places back is
        # no reason to wait again while g-2 fits nowhere: no place is held at Permit after.
        assert sum(waiting_at_permit) == 0, waiting_at_permit
        for name in ("g-0", "g-1"):
            assert len(h.event_notes("default", name, "FailedScheduling")) == 1
        # Once g-2 can go somewhere, the group is tried again and placed whole.
        node = next(n for n in h.sim.objects("nodes") if n["metadata"]["name"] == "n0")
        labelled = {**node, "metadata": {**node["metadata"], "labels": {"pool": "gpu"}}}
        await h.sim.update("nodes", labelled)
        await run_for(h, 180)
        assert bound_count(h, "g") == 3
