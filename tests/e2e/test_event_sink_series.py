"""The event sink against a real kube-apiserver: repeats become one Event with a series, even
while the first create is in flight, and a series whose Event is gone creates it anew."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.cluster.kube import KubeClusterClient
from scheduler.core.event_recorder import EventRecorder
from scheduler.core.event_sink import SERIES_FINISH
from scheduler.core.event_sink import EventSink
from scheduler.framework.handle import ObjectReference
from scheduler.testing import FakeClock

pytestmark = pytest.mark.e2e

# An upper bound for waiting on the server, not a synchronisation delay.
WAIT_S = 30.0


class HeldFirstCreate:
    """The real API, but the first create reaches it only when the test lets it go."""

    def __init__(self, kube: KubeClusterClient) -> None:
        self._kube = kube
        self.hold: asyncio.Future[None] | None = None
        self.held = False

    async def create_event(self, event: Mapping[str, Any]) -> None:
        if self.hold is not None:
            self.held = True
            await self.hold
            self.hold = None
        await self._kube.create_event(event)

    async def patch_object(
        self, resource: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None:
        await self._kube.patch_object(resource, namespace, name, patch)


async def turns_until(done: Callable[[], bool]) -> None:
    """Let the sink's writers run until `done()`, with no I/O in between to wait for."""
    for _ in range(200):
        if done():
            return
        await asyncio.sleep(0)
    raise AssertionError("the sink never got there")


async def test_repeats_during_a_slow_create_make_one_event_that_is_re_created_when_gone(
    kube: KubeClusterClient, namespace: str
) -> None:
    clock = FakeClock()
    api = HeldFirstCreate(kube)
    api.hold = asyncio.get_running_loop().create_future()
    sink = EventSink(api, clock, workers=4)
    recorder = EventRecorder(sink, clock, "e2e")
    pod = ObjectReference("v1", "Pod", namespace, "waiting", "uid-waiting")

    def failed() -> None:
        recorder.object_event(
            pod,
            event_type="Warning",
            reason="FailedScheduling",
            action="Scheduling",
            note="0/0 nodes are available",
            controller="kube-pyscheduler",
        )

    async def listed() -> list[dict[str, Any]]:
        await asyncio.wait_for(sink.drain(), WAIT_S)
        return (await kube.list("events", namespace=namespace)).items

    sink.start()
    try:
        failed()
        await turns_until(lambda: api.held)
        clock.advance(1)
        failed()  # while the first create is in flight
        api.hold.set_result(None)
        [event] = await listed()
        assert event["series"]["count"] == 2
        assert event["series"]["lastObservedTime"].startswith("2026-01-01T00:00:01")

        name = event["metadata"]["name"]
        await kube.delete("events", namespace, name)  # as the server's TTL would
        failed()  # a third occurrence only counts, until the series ends
        assert await listed() == []
        clock.advance(SERIES_FINISH)
        sink.tend_series()
        [again] = await listed()
        assert again["metadata"]["name"] == name
        assert again["series"]["count"] == 3
    finally:
        await sink.stop()
