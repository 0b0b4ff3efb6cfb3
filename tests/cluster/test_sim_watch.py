"""Watch streams: order, resume versions, 410 Gone, field selectors, bookmarks, scale."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from scheduler.cluster.port import WatchEvent
from scheduler.cluster.sim import SimCluster
from scheduler.framework.errors import APIError
from scheduler.framework.errors import GoneError
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_node
from scheduler.testing import make_pod


class Collector:
    """Consumes a watch stream in a task; `settle` lets it catch up with what was written."""

    def __init__(self, stream: AsyncIterator[WatchEvent]) -> None:
        self.events: list[WatchEvent] = []
        self.error: APIError | None = None
        self.ended = False
        self._task = asyncio.create_task(self._consume(stream))

    async def _consume(self, stream: AsyncIterator[WatchEvent]) -> None:
        try:
            async for event in stream:
                self.events.append(event)
        except APIError as error:
            self.error = error
        self.ended = True

    async def settle(self) -> None:
        for _ in range(5):
            await asyncio.sleep(0)

    async def stop(self) -> None:
        self._task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self._task

    def summary(self) -> list[tuple[str, str]]:
        return [(e.type, str(e.object["metadata"].get("name", ""))) for e in self.events]

    def versions(self) -> list[int]:
        return [int(e.resource_version) for e in self.events]


async def test_watch_from_a_version_gets_exactly_the_later_events(sim: SimCluster) -> None:
    await sim.create("pods", make_pod("before").dict())
    mark = str(sim.revision)
    await sim.create("pods", make_pod("a").dict())
    await sim.create("nodes", make_node("n1").dict())  # another resource: not in this stream
    await sim.patch_pod_status("default", "a", {"message": "x"})
    watcher = Collector(sim.watch("pods", resource_version=mark))
    await watcher.settle()
    await sim.delete("pods", "default", "before")
    await sim.create("pods", make_pod("b").dict())
    await watcher.settle()
    assert watcher.summary() == [
        ("ADDED", "a"),
        ("MODIFIED", "a"),
        ("DELETED", "before"),
        ("ADDED", "b"),
    ]
    versions = watcher.versions()
    assert versions == sorted(versions)
    assert len(set(versions)) == len(versions)
    assert versions[-1] == sim.revision
    await watcher.stop()


async def test_deleted_event_carries_the_version_of_the_delete(sim: SimCluster) -> None:
    created = await sim.create("pods", make_pod("p").dict())
    watcher = Collector(sim.watch("pods", resource_version=created["metadata"]["resourceVersion"]))
    await sim.delete_pod("default", "p")
    await watcher.settle()
    [deleted] = watcher.events
    assert deleted.type == "DELETED"
    assert deleted.resource_version == str(sim.revision)
    assert deleted.object["metadata"]["uid"] == created["metadata"]["uid"]
    await watcher.stop()


async def test_every_watcher_gets_every_event(sim: SimCluster) -> None:
    start = str(sim.revision)
    watchers = [Collector(sim.watch("pods", resource_version=start)) for _ in range(3)]
    for i in range(4):
        await sim.create("pods", make_pod(f"p{i}").dict())
    for watcher in watchers:
        await watcher.settle()
    assert all(w.summary() == [("ADDED", f"p{i}") for i in range(4)] for w in watchers)
    for watcher in watchers:
        await watcher.stop()


async def test_watch_from_version_zero_starts_with_the_current_state(sim: SimCluster) -> None:
    await sim.create("pods", make_pod("old").dict())
    watcher = Collector(sim.watch("pods", resource_version="0"))
    await watcher.settle()
    await sim.create("pods", make_pod("new").dict())
    await watcher.settle()
    assert watcher.summary() == [("ADDED", "old"), ("ADDED", "new")]
    await watcher.stop()


async def test_too_old_a_version_is_gone(clock: FakeClock) -> None:
    sim = SimCluster(clock, history_limit=4)
    mark = str(sim.revision)
    for i in range(10):
        await sim.create("pods", make_pod(f"p{i}").dict())
    watcher = Collector(sim.watch("pods", resource_version=mark))
    await watcher.settle()
    assert isinstance(watcher.error, GoneError)
    assert watcher.error.status == 410
    assert watcher.events == []
    # The most recent `history_limit` changes are still served.
    recent = Collector(sim.watch("pods", resource_version=str(sim.revision - 4)))
    await recent.settle()
    assert recent.summary() == [("ADDED", f"p{i}") for i in range(6, 10)]
    await recent.stop()


async def test_a_watcher_that_falls_behind_the_history_is_gone(clock: FakeClock) -> None:
    sim = SimCluster(clock, history_limit=4)
    watcher = Collector(sim.watch("pods", resource_version=str(sim.revision)))
    await watcher.settle()
    for i in range(10):  # written without yielding to the watcher
        await sim.create("pods", make_pod(f"p{i}").dict())
    await watcher.settle()
    assert isinstance(watcher.error, GoneError)


async def test_history_is_kept_per_resource(clock: FakeClock) -> None:
    sim = SimCluster(clock, history_limit=4)
    mark = str(sim.revision)
    await sim.create("pods", make_pod("p").dict())
    for i in range(10):
        await sim.create("nodes", make_node(f"n{i}").dict())
    watcher = Collector(sim.watch("pods", resource_version=mark))
    await watcher.settle()
    assert watcher.error is None
    assert watcher.summary() == [("ADDED", "p")]
    await watcher.stop()


async def test_field_selector_turns_transitions_into_adds_and_deletes(sim: SimCluster) -> None:
    mark = str(sim.revision)
    selector = "status.phase!=Succeeded,status.phase!=Failed"
    watcher = Collector(sim.watch("pods", resource_version=mark, field_selector=selector))
    await sim.create("pods", make_pod("runs").dict())
    await sim.create("pods", make_pod("done").phase("Succeeded").dict())
    await sim.patch_pod_status("default", "runs", {"phase": "Running"})
    await sim.patch_pod_status("default", "runs", {"phase": "Failed"})
    await sim.patch_object("pods", "default", "done", {"status": {"phase": "Pending"}})
    await sim.delete("pods", "default", "done")
    await sim.delete("pods", "default", "runs")  # already out of the selection
    await watcher.settle()
    assert [
        (e.type, e.object["metadata"]["name"]) for e in watcher.events if e.type != "BOOKMARK"
    ] == [
        ("ADDED", "runs"),
        ("MODIFIED", "runs"),
        ("DELETED", "runs"),
        ("ADDED", "done"),
        ("DELETED", "done"),
    ]
    failed = next(e for e in watcher.events if e.type == "DELETED")
    assert failed.object["status"]["phase"] == "Failed"
    await watcher.stop()


async def test_bookmarks_report_progress_through_filtered_changes(sim: SimCluster) -> None:
    mark = str(sim.revision)
    watcher = Collector(sim.watch("pods", resource_version=mark, field_selector="spec.nodeName=n1"))
    quiet = Collector(
        sim.watch(
            "pods", resource_version=mark, field_selector="spec.nodeName=n1", allow_bookmarks=False
        )
    )
    for i in range(3):
        await sim.create("pods", make_pod(f"elsewhere-{i}").node("n2").dict())
    await watcher.settle()
    await quiet.settle()
    assert [e.type for e in watcher.events] == ["BOOKMARK"]
    assert watcher.events[0].resource_version == str(sim.revision)
    assert watcher.events[0].object["kind"] == "Pod"
    assert quiet.events == []
    await watcher.stop()
    await quiet.stop()


async def test_end_watches_and_close_end_the_streams(sim: SimCluster) -> None:
    pods = Collector(sim.watch("pods", resource_version=str(sim.revision)))
    nodes = Collector(sim.watch("nodes", resource_version=str(sim.revision)))
    await pods.settle()
    sim.end_watches("pods")
    await pods.settle()
    await nodes.settle()
    assert pods.ended
    assert pods.error is None
    assert not nodes.ended
    await sim.close()
    await nodes.settle()
    assert nodes.ended
    after_close = Collector(sim.watch("nodes", resource_version=str(sim.revision)))
    await after_close.settle()
    assert after_close.ended


async def test_an_invalid_version_or_selector_is_a_bad_request(sim: SimCluster) -> None:
    for stream in (
        sim.watch("pods", resource_version="abc"),
        sim.watch("pods", resource_version="1", field_selector="no-operator"),
    ):
        watcher = Collector(stream)
        await watcher.settle()
        assert watcher.error is not None
        assert watcher.error.status == 400


async def test_ten_thousand_pods_reach_a_watcher(sim: SimCluster) -> None:
    """Creating and binding many pods stays linear: no per-event copies or rescans."""
    count = 10_000
    watcher = Collector(sim.watch("pods", resource_version=str(sim.revision)))
    template = make_pod("p").req(cpu="100m").dict()
    for i in range(count):
        template["metadata"]["name"] = f"p{i}"
        template["metadata"]["uid"] = f"uid-{i}"
        await sim.create("pods", template)
    for i in range(0, count, 10):
        await sim.bind(_pod(i), "n1")
    await watcher.settle()
    added = [e for e in watcher.events if e.type == "ADDED"]
    modified = [e for e in watcher.events if e.type == "MODIFIED"]
    assert len(added) == count
    assert len(modified) == count // 10
    assert watcher.versions() == sorted(watcher.versions())
    listed = await sim.list("pods", field_selector="spec.nodeName=n1")
    assert len(listed.items) == count // 10
    await watcher.stop()


def _pod(i: int) -> Pod:
    return Pod.from_dict(make_pod(f"p{i}").uid(f"uid-{i}").dict())
