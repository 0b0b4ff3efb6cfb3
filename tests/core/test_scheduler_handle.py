"""The scheduler's Handle: Events a plugin records are reported by the plugin's profile; the
listers it hands out stay the same objects while nothing is watched or nothing is stored; one-off
background work is told apart from loops while it runs."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping

import pytest

from scheduler.backend.cache import SchedulerCache
from scheduler.cluster.informer import InformerStore
from scheduler.cluster.sim import SimCluster
from scheduler.core.event_recorder import EventRecorder
from scheduler.core.handle_impl import LeaderWork
from scheduler.core.handle_impl import SchedulerHandle
from scheduler.framework.handle import Lister
from scheduler.framework.handle import ObjectReference
from scheduler.framework.status import Code
from scheduler.observability import SchedulerMetrics
from scheduler.runtime.pods_in_pre_bind import PodsInPreBind
from scheduler.runtime.waiting_pods import WaitingPod
from scheduler.runtime.waiting_pods import WaitingPods
from scheduler.testing import FakeClock
from scheduler.testing import make_pod
from tests.core.kept_events import KeptEvents


def _handle(
    clock: FakeClock,
    listers: Mapping[str, Lister] | None = None,
    leader_work: LeaderWork | None = None,
    one_off: set[asyncio.Task[None]] | None = None,
) -> SchedulerHandle:
    tasks: set[asyncio.Task[None]] = set()
    return SchedulerHandle(
        profile_name="gang-scheduler",
        clock=clock,
        rng=random.Random(0),
        parallelism=2,
        cache=SchedulerCache(),
        client=SimCluster(clock),
        listers=listers or {},
        waiting_pods=WaitingPods(),
        pods_in_pre_bind=PodsInPreBind(),
        tasks=tasks,
        one_off=one_off if one_off is not None else set(),
        leader_work=leader_work or LeaderWork(),
        plugin_metrics=SchedulerMetrics(),
    )


def test_recording_before_the_recorder_exists_is_a_clear_error() -> None:
    handle = _handle(FakeClock())
    pod = make_pod("p").obj()
    with pytest.raises(RuntimeError, match="the event recorder is not built yet"):
        handle.record_event(pod, event_type="Normal", reason="R", action="A", note="n")
    group = ObjectReference("scheduling.x-k8s.io/v1alpha1", "PodGroup", "ns", "g", "u")
    with pytest.raises(RuntimeError, match="the event recorder is not built yet"):
        handle.record_object_event(group, event_type="Normal", reason="R", action="A", note="n")


def test_events_are_reported_by_the_profile_with_what_the_plugin_said() -> None:
    clock = FakeClock()
    sink = KeptEvents(clock)
    handle = _handle(clock)
    handle.recorder = EventRecorder(sink, clock, "host-1")
    victim, preemptor = make_pod("victim", "ns").obj(), make_pod("preemptor", "ns").obj()
    handle.record_event(
        victim,
        event_type="Normal",
        reason="Preempted",
        action="Preempting",
        note="Preempted by pod ns/preemptor",
        related=preemptor,
    )
    group = ObjectReference("scheduling.x-k8s.io/v1alpha1", "PodGroup", "ns", "g", "u")
    handle.record_object_event(
        group, event_type="Warning", reason="Timeout", action="Scheduling", note="gang timed out"
    )
    first, second = sink.bodies
    assert first["reportingController"] == second["reportingController"] == "gang-scheduler"
    assert (first["type"], first["reason"], first["action"], first["note"]) == (
        "Normal",
        "Preempted",
        "Preempting",
        "Preempted by pod ns/preemptor",
    )
    assert first["regarding"]["name"] == "victim" and first["related"]["name"] == "preemptor"
    assert (second["type"], second["reason"], second["regarding"]["kind"]) == (
        "Warning",
        "Timeout",
        "PodGroup",
    )
    assert "related" not in second


def test_a_lister_is_the_same_object_every_time_even_with_nothing_in_it() -> None:
    # Readers remember the lister and its revision to skip work while nothing changed; a new
    # lister on each call would make every call look like a change.
    empty_store = InformerStore()
    handle = _handle(FakeClock(), {"resourceslices": empty_store})
    assert handle.lister("resourceslices") is empty_store
    unwatched = handle.lister("devicetaintrules")
    assert unwatched is handle.lister("devicetaintrules")
    assert (unwatched.list(), unwatched.revision) == ([], 0)


async def test_rejecting_a_waiting_pod_says_whether_it_ended_the_wait() -> None:
    clock = FakeClock()
    handle = _handle(clock)
    pod = make_pod("p").obj()
    waiting = WaitingPod(pod, "n1", {"Gang": 30.0, "Quota": 30.0}, clock)
    handle._waiting_pods.add(waiting)
    waiting.allow("Gang")
    assert handle.reject_waiting_pod(pod.uid)
    status = await waiting.wait()
    # In the name of the plugin the pod still waited for, whose events may retry it.
    assert (status.code, status.plugin, status.message()) == (
        Code.UNSCHEDULABLE,
        "Quota",
        "removed",
    )
    assert not handle.reject_waiting_pod(pod.uid)  # over already
    assert not handle.reject_waiting_pod("no-such-uid")


async def test_leader_work_waits_for_the_start_and_later_work_starts_at_once() -> None:
    leader_work = LeaderWork()
    handle = _handle(FakeClock(), leader_work=leader_work)
    ran: list[str] = []

    def work(name: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            ran.append(name)
            await asyncio.Event().wait()

        return run

    handle.start_when_leading("first", work("first"))
    await asyncio.sleep(0)
    assert ran == []
    leader_work.start()
    handle.start_when_leading("second", work("second"))
    await asyncio.sleep(0)
    assert ran == ["first", "second"]
    running = set(handle._tasks)
    assert {t.get_name() for t in running} == {
        "plugin:gang-scheduler:first",
        "plugin:gang-scheduler:second",
    }
    leader_work.cancel()
    await asyncio.gather(*running, return_exceptions=True)
    assert all(t.cancelled() for t in running)


async def test_one_off_work_is_counted_until_it_ends_and_a_loop_never_is() -> None:
    one_off: set[asyncio.Task[None]] = set()
    handle = _handle(FakeClock(), one_off=one_off)
    finish, forever = asyncio.Event(), asyncio.Event()

    async def deletions() -> None:
        await finish.wait()

    async def poller() -> None:
        await forever.wait()

    handle.start_background("preemption:ns/p", deletions, one_off=True)
    handle.start_background("prometheus", poller)
    assert {t.get_name() for t in one_off} == {"plugin:gang-scheduler:preemption:ns/p"}
    assert len(handle._tasks) == 2
    finish.set()
    await asyncio.gather(*one_off)
    assert one_off == set()
    (loop,) = handle._tasks
    loop.cancel()
    await asyncio.gather(loop, return_exceptions=True)
