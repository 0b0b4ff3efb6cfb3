"""Carrying out a preemption: API calls in the background, PreEnqueue holding the preemptor
back meanwhile, events, waiting pods and failures."""

from __future__ import annotations

import asyncio

from scheduler.framework import ActionType
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework import Status
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.runtime.pods_in_pre_bind import PodInPreBind
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.plugins.default_preemption_world import FakeWaitingPod
from tests.plugins.default_preemption_world import Statuses
from tests.plugins.default_preemption_world import World
from tests.plugins.default_preemption_world import preemptor
from tests.plugins.default_preemption_world import running
from tests.plugins.default_preemption_world import terminating

WAITING = "waiting for the preemption for this pod to be finished"


def one_node_world(*pods: Pod) -> World:
    node = make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").obj()
    return World([node], list(pods))


async def test_victims_are_marked_deleted_and_reported_after_the_cycle() -> None:
    a = running("a", "n1", cpu="1")
    b = running("b", "n1", cpu="1", priority=5)
    world = one_node_world(a, b)
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    # Nothing was called during the cycle; the work waits in the background.
    assert world.api.calls == []
    assert len(world.handle.background) == 1

    await world.handle.run_background()

    # Most important victim first; each is marked before it is deleted.
    assert world.api.calls == [
        "patch default/b",
        "delete default/b",
        "patch default/a",
        "delete default/a",
    ]
    assert world.api.delete_uids == [b.uid, a.uid]
    key, patch = world.api.status_patches[0]
    assert key == "default/b"
    (condition,) = patch["conditions"]
    assert condition["type"] == "DisruptionTarget"
    assert condition["status"] == "True"
    assert condition["reason"] == "PreemptionByScheduler"
    assert condition["message"] == (
        "default-scheduler: preempting to accommodate a higher priority pod"
    )
    assert condition["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert world.handle.events == [
        {
            "regarding": victim.key,
            "type": "Normal",
            "reason": "Preempted",
            "action": "Preempting",
            "note": f"Preempted by pod {pod.uid} on node n1",
            "related": pod.key,
        }
        for victim in (b, a)
    ]


async def test_pre_enqueue_holds_the_preemptor_until_the_preemption_is_done() -> None:
    world = one_node_world(running("a", "n1", cpu="2"))
    pod = preemptor()
    other = preemptor("other")
    assert world.nominated_node(pod) == "n1"

    status = world.plugin.pre_enqueue(pod)
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == WAITING
    assert world.plugin.pre_enqueue(other).is_success

    await world.handle.run_background()
    assert world.plugin.pre_enqueue(pod).is_success


async def test_a_preemptor_held_back_is_activated_when_the_preemption_ends() -> None:
    """The event that PreEnqueue turned away is not heard again; later ones (the last victim
    gone) may be skipped by every plugin that rejected the pod."""
    world = one_node_world(running("a", "n1", cpu="2"))
    pod, never_held = preemptor(), preemptor("never-held", cpu="2")
    assert world.nominated_node(pod) == "n1"
    assert not world.plugin.pre_enqueue(pod).is_success
    await world.handle.run_background()
    assert world.handle.activated == [pod.key]

    world = one_node_world(running("a", "n1", cpu="2"))
    assert world.nominated_node(never_held) == "n1"
    await world.handle.run_background()
    assert world.handle.activated == []


async def test_the_last_victim_leaving_the_node_releases_the_preemptor_before_its_call_ends() -> (
    None
):
    """The deletion event can reach the queue before the API call returns: PreEnqueue then
    looks at the node itself."""
    a = running("a", "n1", cpu="1")
    b = running("b", "n1", cpu="1", priority=5)
    world = one_node_world(a, b)
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    seen: list[tuple[str, bool]] = []
    info = world.handle.node_info("n1")
    assert info is not None

    original_delete = world.api.delete_pod

    async def delete_and_observe(namespace: str, name: str, uid: str = "") -> None:
        seen.append((f"{name} before", world.plugin.pre_enqueue(pod).is_success))
        await original_delete(namespace, name, uid)
        info.remove_pod(f"{namespace}/{name}")  # the informer's delete, seen by the cache
        seen.append((f"{name} after", world.plugin.pre_enqueue(pod).is_success))

    world.api.delete_pod = delete_and_observe  # type: ignore[method-assign]
    await world.handle.run_background()
    # Removing b (not the last victim) does not release the pod; removing a does.
    assert seen == [
        ("b before", False),
        ("b after", False),
        ("a before", False),
        ("a after", True),
    ]


async def test_a_victim_waiting_at_permit_is_preempted_not_rejected_nor_deleted() -> None:
    a = running("a", "n1", cpu="2")
    world = one_node_world(a)
    waiting = FakeWaitingPod(a, "n1")
    world.handle.waiting[a.uid] = waiting
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    await world.handle.run_background()
    # Preempted, not rejected: its binding cycle fails with an Error (error backoff).
    assert waiting.preemptions == [("DefaultPreemption", "preempted")]
    assert waiting.rejections == []
    assert world.api.calls == []
    assert [e["regarding"] for e in world.handle.events] == [a.key]
    # Upstream's note says the victim was only ever in the scheduler's memory.
    assert [e["note"] for e in world.handle.events] == [
        f"Preempted by pod {pod.uid} on node n1 (in kube-scheduler memory)."
    ]


async def test_a_victim_whose_permit_wait_already_ended_is_deleted() -> None:
    a = running("a", "n1", cpu="2")
    world = one_node_world(a)
    # Allowed a moment ago, its binding cycle not yet resumed: it may be about to bind.
    waiting = FakeWaitingPod(a, "n1", ended=True)
    world.handle.waiting[a.uid] = waiting
    assert world.nominated_node(preemptor()) == "n1"
    await world.handle.run_background()
    assert waiting.preemptions == [("DefaultPreemption", "preempted")]
    assert world.api.calls == ["patch default/a", "delete default/a"]
    assert [e["regarding"] for e in world.handle.events] == [a.key]
    assert world.handle.events[0]["note"].endswith("on node n1")


async def test_a_victim_at_pre_bind_has_its_pre_bind_cancelled_not_deleted() -> None:
    a = running("a", "n1", cpu="2")
    world = one_node_world(a)
    pre_bind: asyncio.Future[Status] = asyncio.get_running_loop().create_future()
    entry = PodInPreBind(pre_bind)
    world.handle.pods_in_pre_bind[a.uid] = entry
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    await world.handle.run_background()
    # Its binding cycle fails with upstream's cause; the pod is only requeued.
    assert pre_bind.cancelled()
    assert entry.cancel_message == "preempted by DefaultPreemption"
    assert world.api.calls == []
    assert [e["note"] for e in world.handle.events] == [
        f"Preempted by pod {pod.uid} on node n1 (in kube-scheduler memory)."
    ]


async def test_a_victim_past_its_pre_bind_is_deleted() -> None:
    a = running("a", "n1", cpu="2")
    world = one_node_world(a)
    pre_bind: asyncio.Future[Status] = asyncio.get_running_loop().create_future()
    entry = PodInPreBind(pre_bind)
    assert entry.mark_pre_bound()  # on its way to Bind
    world.handle.pods_in_pre_bind[a.uid] = entry
    assert world.nominated_node(preemptor()) == "n1"
    await world.handle.run_background()
    assert not pre_bind.cancelled()
    assert world.api.calls == ["patch default/a", "delete default/a"]


async def test_terminating_victims_need_no_calls() -> None:
    gone = terminating(running("gone", "n1", cpu="1"), by_preemption=False)
    world = one_node_world(gone, running("b", "n1", cpu="1"))
    assert world.nominated_node(preemptor()) == "n1"
    await world.handle.run_background()
    assert world.api.calls == ["patch default/b", "delete default/b"]


def test_nothing_runs_when_every_victim_is_already_terminating() -> None:
    world = one_node_world(terminating(running("a", "n1", cpu="2"), by_preemption=False))
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    assert world.handle.background == []
    assert world.plugin.pre_enqueue(pod).is_success
    # A preemption that makes no call is not counted among those that had victims.
    assert sample(world, "scheduler_preemption_victims_count") == 0


async def test_victims_already_terminating_are_counted_when_others_are_preempted() -> None:
    gone = terminating(running("gone", "n1", cpu="1"), by_preemption=False)
    world = one_node_world(gone, running("b", "n1", cpu="1"))
    assert world.nominated_node(preemptor()) == "n1"
    assert sample(world, "scheduler_preemption_victims_sum") == 2


async def test_lower_priority_pods_nominated_to_the_node_lose_their_nomination() -> None:
    low = make_pod("low").req(cpu="1").priority(50).nominated("n1").obj()
    # Nominated in memory only: its status says nothing the API would need cleared.
    unwritten = make_pod("unwritten").req(cpu="1").priority(50).obj()
    high = make_pod("high").req(cpu="1").priority(500).nominated("n2").obj()
    n1 = make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").obj()
    n2 = make_node("n2").capacity(cpu="1", memory="8Gi", pods="10").obj()
    world = World(
        [n1, n2],
        [running("a", "n1", cpu="2")],
        nominated={"n1": [low, unwritten], "n2": [high]},
    )
    assert world.nominated_node(preemptor()) == "n1"
    await world.handle.run_background()
    assert ("default/low", {"nominatedNodeName": None}) in world.api.status_patches
    patched = {key for key, _ in world.api.status_patches}
    assert "default/high" not in patched
    assert "default/unwritten" not in patched


async def test_an_api_failure_leaves_the_remaining_victims_and_releases_the_preemptor() -> None:
    world = one_node_world(running("a", "n1", cpu="1"), running("b", "n1", cpu="1", priority=5))
    world.api.fail["default/b"] = APIError(500, "boom")
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    await world.handle.run_background()
    assert world.api.calls == ["patch default/b"]
    assert world.handle.events == []
    assert world.plugin.pre_enqueue(pod).is_success


def three_victims_world() -> World:
    node = make_node("n1").capacity(cpu="3", memory="8Gi", pods="10").obj()
    victims = [running(name, "n1", cpu="1", priority=p) for name, p in (("a", 3), ("b", 2))]
    return World([node], [*victims, running("c", "n1", cpu="1", priority=1)])


async def test_all_victims_but_the_last_are_preempted_at_once() -> None:
    world = three_victims_world()
    calls = {"active": 0, "peak": 0}
    delete = world.api.delete_pod

    async def overlapping_delete(namespace: str, name: str, uid: str = "") -> None:
        calls["active"] += 1
        calls["peak"] = max(calls["peak"], calls["active"])
        await asyncio.sleep(0)  # a turn of the loop, as a real call would yield
        await delete(namespace, name, uid)
        calls["active"] -= 1

    world.api.delete_pod = overlapping_delete  # type: ignore[method-assign]
    assert world.nominated_node(preemptor(cpu="3")) == "n1"
    await world.handle.run_background()
    assert calls["peak"] == 2
    # The least important victim goes last, alone.
    assert world.api.calls[-2:] == ["patch default/c", "delete default/c"]


async def test_a_failure_among_the_first_victims_spares_the_last() -> None:
    world = three_victims_world()
    world.api.fail["default/a"] = APIError(500, "boom")
    pod = preemptor(cpu="3")
    assert world.nominated_node(pod) == "n1"
    await world.handle.run_background()
    assert "patch default/c" not in world.api.calls
    assert world.plugin.pre_enqueue(pod).is_success


async def test_a_victim_already_gone_is_skipped_without_an_event() -> None:
    """Gone: not found when marked, or replaced by a pod of its name when deleted (the UID
    precondition fails)."""
    world = one_node_world(running("a", "n1", cpu="1"), running("b", "n1", cpu="1", priority=5))
    world.api.fail["default/b"] = NotFoundError('pods "b" not found')
    world.api.fail_delete["default/a"] = ConflictError("Precondition failed: UID")
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    await world.handle.run_background()
    assert world.api.calls == ["patch default/b", "patch default/a", "delete default/a"]
    assert world.handle.events == []
    assert world.handle.activated == []


async def test_a_conflict_marking_a_victim_fails_the_preemption() -> None:
    """As upstream: the mark's conflict (which the client already retried) is an error, not a
    victim gone, so the victim is not deleted and the preemptor is tried again."""
    world = one_node_world(running("a", "n1", cpu="2"))
    world.api.fail["default/a"] = ConflictError("the object has been modified")
    pod = preemptor(cpu="2")
    assert world.nominated_node(pod) == "n1"
    await world.handle.run_background()
    assert world.api.calls == ["patch default/a"]
    assert world.handle.activated == [pod.key]


async def test_a_victim_already_marked_is_not_patched_again() -> None:
    raw = running("a", "n1", cpu="2").raw
    marked = Pod.from_dict(
        {
            **raw,
            "status": {
                **raw["status"],
                "conditions": [
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "PreemptionByScheduler",
                        "message": "default-scheduler: preempting to accommodate a higher "
                        "priority pod",
                    }
                ],
            },
        }
    )
    world = one_node_world(marked)
    assert world.nominated_node(preemptor()) == "n1"
    await world.handle.run_background()
    assert world.api.calls == ["delete default/a"]


async def test_a_marked_victim_is_compared_as_upstream_compares_conditions() -> None:
    """The observed generation does not count; a probe time, which ours lacks, does."""
    raw = running("a", "n1", cpu="2").raw
    condition = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod",
    }
    cases = {
        "observedGeneration": ({**condition, "observedGeneration": 7}, ["delete default/a"]),
        "lastProbeTime": (
            {**condition, "lastProbeTime": "2026-01-01T00:00:00Z"},
            ["patch default/a", "delete default/a"],
        ),
    }
    for case, (existing, calls) in cases.items():
        status = {**raw["status"], "conditions": [existing]}
        marked = Pod.from_dict(
            {**raw, "metadata": {**raw["metadata"], "generation": 3}, "status": status}
        )
        world = one_node_world(marked)
        assert world.nominated_node(preemptor()) == "n1"
        await world.handle.run_background()
        assert world.api.calls == calls, case


def test_registers_assigned_pod_deletion_and_leaves_requeueing_to_the_other_plugins() -> None:
    world = one_node_world()
    (registration,) = world.plugin.events_to_register()
    assert registration.event.resource is EventResource.ASSIGNED_POD
    assert registration.event.action == ActionType.DELETE
    assert registration.hint is not None
    victim = running("a", "n1", cpu="1")
    assert registration.hint(preemptor(), victim, None) is QueueingHint.QUEUE_SKIP


def sample(world: World, name: str, **labels: str) -> float:
    value = world.handle.metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


async def test_attempts_victims_and_the_background_outcome_are_kube_schedulers_metrics() -> None:
    world = one_node_world(running("a", "n1", cpu="1"), running("b", "n1", cpu="1", priority=5))
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    assert sample(world, "scheduler_preemption_attempts_total") == 1
    # Observed when the chosen candidate's preemption starts, as upstream since v1.36.
    assert sample(world, "scheduler_preemption_victims_count") == 1
    assert sample(world, "scheduler_preemption_victims_sum") == 2
    await world.handle.run_background()
    total = "scheduler_preemption_goroutines_execution_total"
    assert sample(world, total, result="success") == 1
    assert sample(world, total, result="error") == 0
    assert world.handle.activated == []
    # An attempt that finds no node to help on counts too.
    result, _ = world.plugin.post_filter(CycleState(), preemptor("other"), Statuses({}))
    assert result is not None and result.nominated_node_name == ""
    assert sample(world, "scheduler_preemption_attempts_total") == 2


async def test_a_failed_preemption_activates_the_preemptor_and_counts_as_an_error() -> None:
    world = one_node_world(running("a", "n1", cpu="1"), running("b", "n1", cpu="1", priority=5))
    world.api.fail["default/b"] = APIError(500, "boom")
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    await world.handle.run_background()
    # No victim left, so no deletion will bring it back: it goes to the active queue now.
    assert world.handle.activated == [pod.key]
    total = "scheduler_preemption_goroutines_execution_total"
    assert sample(world, total, result="error") == 1
    assert (
        sample(world, "scheduler_preemption_goroutines_duration_seconds_count", result="error") == 1
    )


async def test_a_nomination_that_cannot_be_cleared_makes_the_outcome_an_error() -> None:
    low = make_pod("low").req(cpu="1").priority(50).nominated("n1").obj()
    node = make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").obj()
    world = World([node], [running("a", "n1", cpu="2")], nominated={"n1": [low]})
    world.api.fail["default/low"] = APIError(503, "unavailable")
    pod = preemptor()
    assert world.nominated_node(pod) == "n1"
    await world.handle.run_background()
    # The victim still goes; the preemptor is activated all the same, as upstream does.
    assert "delete default/a" in world.api.calls
    assert world.handle.activated == [pod.key]
    total = "scheduler_preemption_goroutines_execution_total"
    assert sample(world, total, result="error") == 1
