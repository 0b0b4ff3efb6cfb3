"""Events name the replica by host name and are named as upstream names them."""

from __future__ import annotations

from typing import Any

from scheduler.core.api_dispatcher import ApiDispatcher
from scheduler.core.event_recorder import EventRecorder
from scheduler.testing import FakeClock, make_pod


class Client:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def create_event(self, body: dict[str, Any]) -> None:
        self.bodies.append(body)


async def test_reporting_instance_is_profile_and_host_and_names_never_repeat() -> None:
    clock = FakeClock()
    client = Client()
    dispatcher = ApiDispatcher()
    recorder = EventRecorder(client, clock, dispatcher, "node-a.example")
    pod = make_pod("web", "shop").obj()
    for _ in range(2):
        recorder.pod_event(
            pod,
            event_type="Normal",
            reason="Scheduled",
            action="Binding",
            note="Successfully assigned shop/web to n1",
            controller="my-scheduler",
        )
    dispatcher.start()
    await dispatcher.drain()
    await dispatcher.stop()

    bodies = client.bodies
    assert [b["reportingInstance"] for b in bodies] == ["my-scheduler-node-a.example"] * 2
    assert [b["reportingController"] for b in bodies] == ["my-scheduler"] * 2
    assert all("deprecatedSource" not in b for b in bodies)  # upstream's recorder sets none
    stamp = int(clock.wall().timestamp()) * 1_000_000_000
    assert [b["metadata"]["name"] for b in bodies] == [f"web.{stamp:x}", f"web.{stamp + 1:x}"]
