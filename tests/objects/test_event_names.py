"""Event names: `<object>.<hex nanoseconds>`, or a UUID when that is no valid name."""

from __future__ import annotations

import uuid

from scheduler.objects.event_names import event_name


def test_an_event_is_named_after_its_object_and_time() -> None:
    assert event_name("web-0", 0x18A2B) == "web-0.18a2b"


def test_a_name_too_long_with_the_stamp_becomes_a_uuid() -> None:
    regarding = "p" * 240  # a valid pod name, but 240 + 1 + 16 > 253
    name = event_name(regarding, 0x187A3B2C4D5E6F70)
    assert uuid.UUID(name).version == 4
