"""What a successful binding cycle reports, and when: the attempt is counted at the binding,
not after the wait for room to hand over its `Scheduled` Event."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from scheduler.objects.pod import Pod
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness


async def test_a_bound_pod_is_counted_before_its_event_finds_room(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A full Event queue makes the binding cycle wait to hand over `Scheduled`; the attempt
    # is counted (and timed) at the binding all the same, as upstream's never-waiting Event
    # leaves its latencies alone.
    async with Harness() as h:
        reached, release = asyncio.Event(), asyncio.Event()
        recorder = h.scheduler.recorder
        real = recorder.pod_event_waiting

        async def held(pod: Pod, **fields: Any) -> None:
            reached.set()
            await release.wait()
            await real(pod, **fields)

        monkeypatch.setattr(recorder, "pod_event_waiting", held)
        h.create([make_node("n1").dict(), make_pod("p").dict()])
        await h.informers_caught_up()
        info = h.scheduler.queue.pop()
        assert info is not None
        await h.scheduler.schedule_next(info)
        await reached.wait()
        scheduled = h.scheduler.metrics.registry.get_sample_value(
            "scheduler_schedule_attempts_total",
            {"result": "scheduled", "profile": "default-scheduler"},
        )
        assert scheduled == 1
        release.set()
        await h.quiesce()
        assert h.event_notes("default", "p", "Scheduled") == [
            "Successfully assigned default/p to n1"
        ]
