"""Events name the replica by host name and are named as upstream names them."""

from __future__ import annotations

import pytest

from scheduler.core.event_recorder import EventRecorder
from scheduler.core.event_recorder import truncate_note
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


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        pytest.param("a" * 1024, "a" * 1024, id="ascii-at-the-limit"),
        pytest.param("a" * 1025, "a" * 1020 + " ...", id="ascii-over-the-limit"),
        pytest.param("é" * 512, "é" * 512, id="two-byte-at-the-limit"),
        # 1020 bytes of room hold 340 three-byte characters exactly.
        pytest.param("ノ" * 342, "ノ" * 340 + " ...", id="three-byte-over"),
        # 1020 bytes of room hold 255 four-byte characters; the 256th would be split.
        pytest.param("a" + "🙂" * 256, "a" + "🙂" * 254 + " ...", id="cut-between-characters"),
    ],
)
def test_notes_are_cut_to_the_api_servers_limit_in_bytes(note: str, expected: str) -> None:
    assert truncate_note(note) == expected
    assert len(truncate_note(note).encode()) <= 1024
