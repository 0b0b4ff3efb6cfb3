"""The status written after a failed attempt: only what changed, upstream's reasons."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any

import pytest

from scheduler.core.pod_status import failure_status_patch
from scheduler.objects.pod import Pod
from scheduler.testing import make_pod

NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
MESSAGE = "0/3 nodes are available: 3 Insufficient cpu."


def _with_condition(reason: str, message: str, nominated: str = "") -> Pod:
    raw = make_pod("p").nominated(nominated).dict() if nominated else make_pod("p").dict()
    raw["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
    ]
    return Pod.from_dict(raw)


def _patch(pod: Pod, **overrides: Any) -> dict[str, Any] | None:
    arguments: dict[str, Any] = {
        "message": MESSAGE,
        "rejected": True,
        "nominated": "",
        "clear_nomination": True,
        "now": NOW,
    }
    arguments.update(overrides)
    return failure_status_patch(pod, **arguments)


def test_first_failure_writes_the_condition() -> None:
    patch = _patch(make_pod("p").obj())
    assert patch == {
        "status": {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": MESSAGE,
                    "lastTransitionTime": "2026-05-01T12:00:00Z",
                    "lastProbeTime": None,
                }
            ]
        }
    }


def test_errors_are_scheduler_errors() -> None:
    patch = _patch(make_pod("p").obj(), rejected=False, message="boom")
    assert patch is not None
    assert patch["status"]["conditions"][0]["reason"] == "SchedulerError"


def test_an_unchanged_condition_is_not_written_again() -> None:
    assert _patch(_with_condition("Unschedulable", MESSAGE)) is None
    assert _patch(_with_condition("Unschedulable", "older text")) is not None


@pytest.mark.parametrize(
    ("current", "nominated", "clear", "expected"),
    [
        ("", "n1", True, "n1"),  # preemption nominated a node
        ("n1", "", True, None),  # cleared: written as null
        ("n1", "n1", False, "kept"),  # PostFilter declined: nomination kept, nothing to write
    ],
    ids=["nominate", "clear", "keep"],
)
def test_nomination(current: str, nominated: str, clear: bool, expected: str | None) -> None:
    pod = _with_condition("Unschedulable", MESSAGE, nominated=current)
    patch = _patch(pod, nominated=nominated, clear_nomination=clear)
    if expected == "kept":
        assert patch is None
    else:
        assert patch is not None
        assert patch["status"]["nominatedNodeName"] == expected


def test_the_condition_carries_the_generation_it_judged() -> None:
    raw = make_pod("p").dict()
    raw["metadata"]["generation"] = 3
    patch = _patch(Pod.from_dict(raw))
    assert patch is not None
    assert patch["status"]["conditions"][0]["observedGeneration"] == 3


def test_a_new_reason_keeps_the_time_the_condition_turned_false() -> None:
    raw = make_pod("p").dict()
    raw["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "SchedulerError",
            "message": "boom",
            "lastTransitionTime": "2026-04-30T08:00:00Z",
        }
    ]
    patch = _patch(Pod.from_dict(raw))
    assert patch is not None
    assert patch["status"]["conditions"][0]["lastTransitionTime"] == "2026-04-30T08:00:00Z"


def test_a_nomination_the_api_holds_beyond_the_pods_copy_is_cleared() -> None:
    # The binding cycle nominated the pod after this copy of it was read.
    patch = _patch(make_pod("p").obj(), standing_nomination="n1")
    assert patch is not None
    assert patch["status"]["nominatedNodeName"] is None
    # Without it, the copy has no nomination to clear.
    assert "nominatedNodeName" not in (_patch(make_pod("p").obj()) or {})["status"]
