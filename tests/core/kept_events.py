"""An Event sink that keeps what it is handed, so tests can read Event bodies as built."""

from __future__ import annotations

from typing import Any

from scheduler.core.event_sink import EventSink
from scheduler.testing import FakeClock


class KeptEvents(EventSink):
    """Keeps what the recorder hands over, before any correlation or write."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(self, clock)  # type: ignore[arg-type]
        self.bodies: list[dict[str, Any]] = []

    def submit(self, event: dict[str, Any]) -> None:
        self.bodies.append(event)
