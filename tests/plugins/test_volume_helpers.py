"""plugins.helpers.volumes: storage quantities and the added-or-changed hint of raw objects."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.helpers.volumes import added_or_changed
from plugins.helpers.volumes import storage_bytes
from scheduler.framework import QueueingHint
from scheduler.objects.raw import RawObject
from scheduler.testing import make_pod

POD = make_pod("p").obj()


@pytest.mark.parametrize(
    ("value", "want"),
    [("1Gi", 1 << 30), ("500M", 500_000_000), (7, 7), (None, None), ("lots", None), ([], None)],
)
def test_storage_bytes_reads_quantities_and_gives_none_for_the_rest(
    value: Any, want: int | None
) -> None:
    assert storage_bytes(value) == want


def _zone(obj: RawObject) -> object:
    return obj.get("zone")


def test_added_or_changed_queues_an_add() -> None:
    assert added_or_changed(None, {"zone": "a"}, "Thing", _zone) is QueueingHint.QUEUE


def test_added_or_changed_queues_only_when_the_aspect_changed() -> None:
    before = {"zone": "a", "other": 1}
    assert added_or_changed(before, {"zone": "b", "other": 1}, "Thing", _zone) is (
        QueueingHint.QUEUE
    )
    assert added_or_changed(before, {"zone": "a", "other": 2}, "Thing", _zone) is (
        QueueingHint.QUEUE_SKIP
    )


def test_added_or_changed_refuses_what_is_not_an_api_object() -> None:
    with pytest.raises(TypeError) as caught:
        added_or_changed({"zone": "a"}, POD, "Thing", _zone)
    assert str(caught.value) == "expected the new object of a Thing event, got Pod"
