"""Failures of the scheduler's own code: the pod is never lost, the process never idles."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.core.outcome import Failure
from scheduler.core.outcome import Placement
from scheduler.core.placement_search import PlacementSearch
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime.framework import Framework
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

PAST_BACKOFF = 11.0


async def test_a_binding_cycle_that_raises_fails_the_pod_with_an_error_and_retries_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_pre_bind = Framework.run_pre_bind
    calls: list[str] = []

    async def broken_once(framework: Framework, state: CycleState, pod: Pod, node: str) -> Status:
        calls.append(pod.key)
        if len(calls) == 1:
            raise KeyError("lost track of the volume")
        return await real_pre_bind(framework, state, pod, node)

    monkeypatch.setattr(Framework, "run_pre_bind", broken_once)
    async with Harness() as h:
        h.create([make_node("n1").dict(), make_pod("p").dict()])
        await h.schedule_active()
        assert h.node_of("default", "p") is None
        notes = h.event_notes("default", "p", "FailedScheduling")
        assert notes == ["running the binding cycle: KeyError: 'lost track of the volume'"]
        assert not h.scheduler.cache.is_assumed("default/p")
        assert h.scheduler.fatal_error is None
        h.clock.advance(PAST_BACKOFF)
        h.scheduler.queue.flush_backoff_completed()
        await h.schedule_active()
        assert h.node_of("default", "p") == "n1"


async def test_a_failure_while_handling_a_failure_is_fatal_and_retrieved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(framework: Framework, state: CycleState, pod: Pod, node: str) -> Status:
        raise KeyError("first")

    monkeypatch.setattr(Framework, "run_pre_bind", broken)
    async with Harness() as h:
        seen: list[BaseException] = []
        h.scheduler.on_fatal(seen.append)

        def handle_failure_broken(*args: Any) -> None:
            raise RuntimeError("the failure handler broke")

        monkeypatch.setattr(h.scheduler.failures, "handle", handle_failure_broken)
        h.create([make_node("n1").dict(), make_pod("p").dict()])
        await h.schedule_active()
        assert isinstance(h.scheduler.fatal_error, RuntimeError)
        assert seen == [h.scheduler.fatal_error]


async def test_an_algorithm_failure_fails_only_that_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    real = PlacementSearch.run

    def broken_for_p(search: PlacementSearch) -> Placement | Failure:
        if search.pod.name == "p":
            raise ValueError("range() arg 3 must not be zero")
        return real(search)

    monkeypatch.setattr(PlacementSearch, "run", broken_for_p)
    async with Harness() as h:
        h.create([make_node("n1").dict(), make_pod("p").dict(), make_pod("q").dict()])
        await h.schedule_active()
        assert h.node_of("default", "q") == "n1"
        assert h.node_of("default", "p") is None
        assert h.event_notes("default", "p", "FailedScheduling") == [
            "running the scheduling algorithm: ValueError: range() arg 3 must not be zero"
        ]
        assert h.scheduler.queue.locate("default/p") == "backoff"
