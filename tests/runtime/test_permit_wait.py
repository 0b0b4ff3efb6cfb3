"""WaitOnPermit: how a wait ends (allowed, rejected, timed out, preempted), what the binding
cycle is told, and the `scheduler_permit_wait_duration_seconds` it records."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import cast

import pytest

from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.status import Code
from scheduler.observability import SchedulerMetrics
from scheduler.runtime.profile import Profile
from scheduler.runtime.reservation import wait_on_permit
from scheduler.runtime.waiting_pods import WaitingPod
from scheduler.runtime.waiting_pods import WaitingPods
from scheduler.testing import FakeClock
from scheduler.testing import make_pod

PERMIT_TIMEOUT = 30.0
WAIT_DURATION = "scheduler_permit_wait_duration_seconds"


@dataclass
class Handle:
    clock: FakeClock = field(default_factory=FakeClock)


@dataclass
class Permits:
    """The part of a Profile that WaitOnPermit reads."""

    handle: Handle = field(default_factory=Handle)
    waiting_pods: WaitingPods = field(default_factory=WaitingPods)
    metrics: SchedulerMetrics = field(default_factory=SchedulerMetrics)

    def hold(self, pod: Pod, *plugins: str) -> WaitingPod:
        timeouts = dict.fromkeys(plugins, PERMIT_TIMEOUT)
        waiting = WaitingPod(pod, "n1", timeouts, self.handle.clock)
        self.waiting_pods.add(waiting)
        return waiting

    def waited(self, result: str) -> tuple[float | None, float | None]:
        """How many waits ended as `result`, and their seconds in total."""
        labels = {"result": result}
        registry = self.metrics.registry
        return (
            registry.get_sample_value(f"{WAIT_DURATION}_count", labels),
            registry.get_sample_value(f"{WAIT_DURATION}_sum", labels),
        )


async def _wait_while(permits: Permits, pod: Pod, end: Callable[[], object]) -> Status:
    """Wait on Permit for `pod`; 5 seconds later, `end` the wait."""
    task = asyncio.create_task(wait_on_permit(cast(Profile, permits), pod))
    await asyncio.sleep(0)  # the wait has started
    permits.handle.clock.advance(5)
    end()
    return await task


async def test_an_allowed_wait_succeeds_and_is_recorded_as_success() -> None:
    permits, pod = Permits(), make_pod("p").obj()
    waiting = permits.hold(pod, "Gate", "Quota")

    def allow_both() -> None:
        waiting.allow("Gate")
        waiting.allow("Quota")

    status = await _wait_while(permits, pod, allow_both)

    assert status.is_success
    assert permits.waited("Success") == (1, 5)
    assert permits.waiting_pods.get(pod.uid) is None


async def test_a_rejection_is_passed_through_and_recorded_as_unschedulable() -> None:
    permits, pod = Permits(), make_pod("p").obj()
    waiting = permits.hold(pod, "Gate")

    status = await _wait_while(permits, pod, lambda: waiting.reject("Gate", "not yet"))

    assert status == Status(Code.UNSCHEDULABLE, "not yet", plugin="Gate")
    assert permits.waited("Unschedulable") == (1, 5)


async def test_a_timeout_is_a_rejection_recorded_as_unschedulable() -> None:
    permits, pod = Permits(), make_pod("p").obj()
    permits.hold(pod, "Gate")

    status = await _wait_while(
        permits, pod, lambda: permits.handle.clock.advance(PERMIT_TIMEOUT - 5)
    )

    assert status == Status(
        Code.UNSCHEDULABLE,
        "rejected due to timeout after waiting 30s at plugin Gate",
        plugin="Gate",
    )
    assert permits.waited("Unschedulable") == (1, PERMIT_TIMEOUT)


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0.0001, "100µs"), (0.0015, "1.5ms"), (123.456789, "2m3.456789s"), (600.0, "10m0s")],
)
async def test_a_timeout_is_said_as_go_prints_the_duration(seconds: float, said: str) -> None:
    clock = FakeClock()
    waiting = WaitingPod(make_pod("p").obj(), "n1", {"Gate": seconds}, clock)
    clock.advance(seconds)
    status = await waiting.wait()
    assert status.message() == f"rejected due to timeout after waiting {said} at plugin Gate"


async def test_a_preempted_wait_fails_with_an_error_in_upstreams_words() -> None:
    permits, pod = Permits(), make_pod("p").obj()
    waiting = permits.hold(pod, "Gate")

    status = await _wait_while(
        permits, pod, lambda: waiting.preempt("DefaultPreemption", "preempted")
    )

    # An Error, not a rejection: the pod goes to error backoff with reason SchedulerError.
    assert status == Status(
        Code.ERROR, "waiting on permit for pod: preempted", plugin="DefaultPreemption"
    )
    assert permits.waited("Error") == (1, 5)
    assert permits.waiting_pods.get(pod.uid) is None


async def test_preempt_says_whether_it_ended_the_wait() -> None:
    permits = Permits()
    waiting = permits.hold(make_pod("p").obj(), "Gate")
    allowed = permits.hold(make_pod("q").obj(), "Gate")
    allowed.allow("Gate")

    assert waiting.preempt("DefaultPreemption", "preempted") is True
    assert waiting.pending_plugins() == []
    # Once a wait has ended, preempting it changes nothing: the caller must delete instead.
    assert waiting.preempt("DefaultPreemption", "again") is False
    assert allowed.preempt("DefaultPreemption", "preempted") is False
    assert (await allowed.wait()).is_success


async def test_a_preempted_wait_no_longer_times_out() -> None:
    permits, pod = Permits(), make_pod("p").obj()
    waiting = permits.hold(pod, "Gate")
    waiting.preempt("DefaultPreemption", "preempted")

    permits.handle.clock.advance(PERMIT_TIMEOUT)

    assert (await waiting.wait()).code is Code.ERROR
