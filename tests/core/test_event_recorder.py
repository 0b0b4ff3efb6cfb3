"""Events name the replica by host name and are named as upstream names them."""

from __future__ import annotations

from scheduler.core.event_recorder import EventRecorder
from scheduler.testing import FakeClock
from scheduler.testing import make_pod
from tests.core.kept_events import KeptEvents


async def test_reporting_instance_is_profile_and_host_and_names_never_repeat() -> None:
    clock = FakeClock()
    sink = KeptEvents(clock)
    recorder = EventRecorder(sink, clock, "node-a.example")
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
    bodies = sink.bodies
    assert [b["reportingInstance"] for b in bodies] == ["my-scheduler-node-a.example"] * 2
    assert [b["reportingController"] for b in bodies] == ["my-scheduler"] * 2
    assert all("deprecatedSource" not in b for b in bodies)  # upstream's recorder sets none
    stamp = int(clock.wall().timestamp()) * 1_000_000_000
    assert [b["metadata"]["name"] for b in bodies] == [f"web.{stamp:x}", f"web.{stamp + 1:x}"]
