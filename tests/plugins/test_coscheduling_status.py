"""Coscheduling's PodGroup status writer: which groups a profile writes, and that it is kept
for the replica that schedules from the plugin's construction, not from a first cycle."""

from __future__ import annotations

from typing import Any

from plugins.coscheduling import Coscheduling
from plugins.coscheduling.status import sync_once
from scheduler.testing import FakeHandle
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import RecordingAPI

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def _group(name: str, phase: str = "") -> dict[str, Any]:
    group: dict[str, Any] = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"minMember": 2},
    }
    if phase:
        group["status"] = {"phase": phase, "running": 0}
    return group


def _member(group: str, index: int, scheduler: str, node: str = "") -> dict[str, Any]:
    builder = make_pod(f"{group}-{index}").label(GROUP_LABEL, group).scheduler(scheduler)
    return (builder.node(node) if node else builder).dict()


def _patched(api: RecordingAPI) -> dict[str, Any]:
    return {name: patch["status"] for _, name, patch in api.object_patches}


async def test_only_groups_this_profile_serves_are_written() -> None:
    groups = [
        # Served: one member, bound already, is this profile's.
        _group("ours", phase="Pending"),
        # Another scheduler's, out of date as seen from here: its own controller keeps it.
        _group("theirs", phase="Pending"),
        # No members at all: only an empty phase is set, to Pending.
        _group("new"),
        _group("emptied", phase="Scheduling"),
    ]
    pods = [
        _member("ours", 0, "default-scheduler", node="n0"),
        _member("ours", 1, "other-scheduler"),
        _member("theirs", 0, "other-scheduler", node="n0"),
        _member("theirs", 1, "other-scheduler"),
    ]
    api = RecordingAPI()
    handle = FakeHandle(listers={"podgroups": groups, "pods": pods}, api=api)
    assert await sync_once(handle) == 2
    patched = _patched(api)
    assert sorted(patched) == ["default/new", "default/ours"]
    assert patched["default/new"] == {"phase": "Pending", "running": 0}
    assert patched["default/ours"]["phase"] == "Scheduling"
    # Nothing is said about a group another scheduler's pods wait in either.
    assert handle.events == []


def test_the_status_writer_is_kept_for_the_replica_that_schedules() -> None:
    handle = FakeHandle()
    Coscheduling(None, handle)
    assert list(handle.leader_work) == ["podgroup-status"]
    assert handle.background_work == {}
