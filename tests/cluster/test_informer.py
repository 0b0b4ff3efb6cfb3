"""The informer over the in-memory cluster: list, watch, relist on Gone, reconnect, backoff."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Callable
from typing import Any

import pytest

from scheduler.cluster.informer import Backoff
from scheduler.cluster.informer import Informer
from scheduler.cluster.informer import InformerStore
from scheduler.cluster.port import ClusterClient
from scheduler.cluster.port import WatchEvent
from scheduler.cluster.sim import SimCluster
from scheduler.core.explain.cluster_state import not_listed
from scheduler.framework.errors import APIError
from scheduler.framework.errors import GoneError
from scheduler.framework.errors import NotFoundError
from scheduler.framework.handle import Lister
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.conftest import CapturedLogs


class Recorder:
    """Handler calls as (verb, name) pairs."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def add(self, obj: dict[str, Any]) -> None:
        self.calls.append(("add", obj["metadata"]["name"]))

    def update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        assert old["metadata"]["name"] == new["metadata"]["name"]
        self.calls.append(("update", new["metadata"]["name"]))

    def delete(self, obj: dict[str, Any]) -> None:
        self.calls.append(("delete", obj["metadata"]["name"]))

    def take(self) -> list[tuple[str, str]]:
        calls, self.calls = self.calls, []
        return calls


def no_jitter() -> float:
    """The draw that leaves every backoff wait at its step, so tests know the waits."""
    return 0.0


def informer_for(
    client: ClusterClient,
    clock: FakeClock,
    recorder: Recorder,
    resource: str = "pods",
    field_selector: str | None = None,
    jitter: Callable[[], float] = no_jitter,
) -> Informer:
    return Informer(
        client,
        resource,
        clock=clock,
        field_selector=field_selector,
        on_add=recorder.add,
        on_update=recorder.update,
        on_delete=recorder.delete,
        name=f"test-{resource}",
        jitter=jitter,
    )


async def settle() -> None:
    for _ in range(30):
        await asyncio.sleep(0)


class Running:
    """An informer's `run` as a task, cancelled on exit."""

    def __init__(self, informer: Informer) -> None:
        self.informer = informer
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Informer:
        self.task = asyncio.create_task(self.informer.run(), name=self.informer.name)
        await settle()
        return self.informer

    async def __aexit__(self, *_: object) -> None:
        assert self.task is not None
        assert not self.task.done(), "the informer loop must never end on its own"
        self.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self.task


async def test_list_then_watch_keeps_store_and_handlers_current(
    sim: SimCluster, clock: FakeClock
) -> None:
    await sim.create("pods", make_pod("a").dict())
    await sim.create("pods", make_pod("b").dict())
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder)
    assert not informer.has_synced
    async with Running(informer):
        assert informer.synced.is_set()
        assert sorted(recorder.take()) == [("add", "a"), ("add", "b")]
        b = Pod.from_dict(sim.objects("pods")[1])
        await sim.bind(b, "n1")
        await sim.delete_pod("default", "a")
        await sim.create("pods", make_pod("c").dict())
        await settle()
        assert recorder.take() == [("update", "b"), ("delete", "a"), ("add", "c")]
        lister: Lister = informer.store
        bound = lister.get("default", "b")
        assert bound is not None
        assert bound["spec"]["nodeName"] == "n1"
        assert lister.get("default", "a") is None
        assert sorted(p["metadata"]["name"] for p in lister.list("default")) == ["b", "c"]
        assert lister.list("elsewhere") == []
        assert informer.resource_version == str(sim.revision)


async def test_a_field_selected_informer_sees_pods_leave(sim: SimCluster, clock: FakeClock) -> None:
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder, field_selector="spec.nodeName=")
    pod = Pod.from_dict(await sim.create("pods", make_pod("p").dict()))
    async with Running(informer):
        await sim.bind(pod, "n1")
        await settle()
        assert recorder.take() == [("add", "p"), ("delete", "p")]
        assert len(informer.store) == 0


async def test_gone_relists_and_reports_the_difference(
    clock: FakeClock, captured_logs: CapturedLogs
) -> None:
    sim = SimCluster(clock, history_limit=4)
    for name in ("stays", "changes", "goes"):
        await sim.create("pods", make_pod(name).dict())
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder)
    async with Running(informer):
        recorder.take()
        # Written without yielding, so the watcher falls behind the trimmed history.
        await sim.patch_pod_status("default", "changes", {"message": "new"})
        await sim.delete_pod("default", "goes")
        for i in range(8):
            await sim.create("pods", make_pod(f"new{i}").dict())
        await settle()
        [expired] = [r for r in captured_logs.records() if r["msg"] == "Watch expired; relisting"]
        assert expired["informer"] == "test-pods"
        calls = recorder.take()
        assert sorted(calls) == sorted(
            [("update", "changes"), ("delete", "goes")] + [("add", f"new{i}") for i in range(8)]
        )
        assert ("update", "stays") not in calls
        assert clock.pending_timers == 0, "a first Gone relists at once"
        changed = informer.store.get("default", "changes")
        assert changed is not None
        assert changed["status"]["message"] == "new"
        # And it is watching again from the relist.
        await sim.create("pods", make_pod("later").dict())
        await settle()
        assert recorder.take() == [("add", "later")]


async def test_an_injected_watch_error_reconnects_after_backoff(
    sim: SimCluster, clock: FakeClock
) -> None:
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder, resource="nodes")
    sim.fail_next("watch", "nodes", APIError(500, "boom"))
    async with Running(informer):
        assert informer.synced.is_set()
        await sim.create("nodes", make_node("n1").dict())
        await settle()
        assert recorder.take() == []
        assert clock.next_deadline() == pytest.approx(clock.now() + 0.8)
        clock.advance(0.8)
        await settle()
        assert recorder.take() == [("add", "n1")]


async def test_list_failures_back_off_doubling_then_sync(sim: SimCluster, clock: FakeClock) -> None:
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder, resource="namespaces")
    for _ in range(3):
        sim.fail_next("list", "namespaces", APIError(503, "unavailable"))
    delays = []
    async with Running(informer):
        while not informer.synced.is_set():
            deadline = clock.next_deadline()
            assert deadline is not None
            delays.append(deadline - clock.now())
            clock.advance(deadline - clock.now())
            await settle()
        assert delays == pytest.approx([0.8, 1.6, 3.2])
        assert len(recorder.take()) == 4  # the system namespaces


async def test_the_last_failure_is_kept_until_a_list_succeeds(
    sim: SimCluster, clock: FakeClock
) -> None:
    informer = informer_for(sim, clock, Recorder(), resource="namespaces")
    sim.fail_next("list", "namespaces", APIError(0, "GET /api/v1/namespaces: connection refused"))
    async with Running(informer):
        await settle()
        assert not informer.synced.is_set()
        assert informer.last_error == "GET /api/v1/namespaces: connection refused"
        assert not_listed([informer], 60) == (
            "the cluster did not list within 60s (still listing: test-namespaces); "
            "test-namespaces last failed with: GET /api/v1/namespaces: connection refused"
        )
        deadline = clock.next_deadline()
        assert deadline is not None
        clock.advance(deadline - clock.now())
        await settle()
        assert informer.synced.is_set() and informer.last_error == ""


@pytest.mark.parametrize(
    ("error", "traceback"),
    [
        pytest.param(APIError(0, "GET /api/v1/nodes: no answer"), False, id="api-error"),
        pytest.param(RuntimeError("a bug"), True, id="unexpected"),
    ],
)
async def test_a_failed_list_logs_one_line_unless_unexpected(
    sim: SimCluster,
    clock: FakeClock,
    captured_logs: CapturedLogs,
    monkeypatch: pytest.MonkeyPatch,
    error: Exception,
    traceback: bool,
) -> None:
    listing = sim.list

    async def fail_once(resource: str, **options: Any) -> Any:
        monkeypatch.setattr(sim, "list", listing)
        raise error

    monkeypatch.setattr(sim, "list", fail_once)
    informer = informer_for(sim, clock, Recorder(), resource="nodes")
    async with Running(informer):
        pass
    [record] = captured_logs.records("warning")
    assert record["msg"] == "List/watch failed; retrying"
    assert (record["informer"], record["delay"]) == ("test-nodes", 0.8)
    assert (record.get("err") == str(error)) is not traceback
    assert ("exception" in record) is traceback


async def test_an_ended_stream_resumes_from_the_last_version(
    sim: SimCluster, clock: FakeClock
) -> None:
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder)
    async with Running(informer):
        sim.end_watches("pods")
        await settle()
        await sim.create("pods", make_pod("while-away").dict())
        await settle()
        assert recorder.take() == []
        clock.advance(0.8)
        await settle()
        assert recorder.take() == [("add", "while-away")]


async def test_a_failing_handler_is_logged_and_does_not_stop_the_informer(
    sim: SimCluster, clock: FakeClock, captured_logs: CapturedLogs
) -> None:
    seen: list[str] = []

    def fragile(obj: dict[str, Any]) -> None:
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "bad":
            raise RuntimeError("handler bug")

    informer = Informer(sim, "pods", clock=clock, on_add=fragile, name="fragile")
    async with Running(informer):
        await sim.create("pods", make_pod("bad").dict())
        await sim.create("pods", make_pod("good").dict())
        await settle()
    assert seen == ["bad", "good"]
    assert informer.store.get("default", "bad") is not None
    [record] = captured_logs.records("error")
    assert (record["msg"], record["informer"], record["object"]) == (
        "Event handler failed",
        "fragile",
        "default/bad",
    )
    assert "RuntimeError: handler bug" in record["exception"]


def test_replace_reports_only_what_differs(sim: SimCluster, clock: FakeClock) -> None:
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder)

    def pod(name: str, version: str) -> dict[str, Any]:
        return {"metadata": {"namespace": "default", "name": name, "resourceVersion": version}}

    informer.replace([pod("a", "1"), pod("b", "2")], "2")
    assert recorder.take() == [("add", "a"), ("add", "b")]
    informer.replace([pod("a", "1"), pod("b", "5"), pod("c", "6")], "6")
    assert recorder.take() == [("update", "b"), ("add", "c")]
    informer.replace([pod("c", "6")], "7")
    assert sorted(recorder.take()) == [("delete", "a"), ("delete", "b")]
    assert informer.resource_version == "7"


def test_a_bookmark_moves_the_version_only(sim: SimCluster, clock: FakeClock) -> None:
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder)
    informer.apply(WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": "42"}}))
    assert informer.resource_version == "42"
    assert recorder.take() == []
    assert len(informer.store) == 0


def test_deleting_an_unknown_object_calls_no_handler(sim: SimCluster, clock: FakeClock) -> None:
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder)
    ghost = {"metadata": {"namespace": "default", "name": "ghost", "resourceVersion": "9"}}
    informer.apply(WatchEvent("DELETED", ghost))
    assert recorder.take() == []
    assert informer.resource_version == "9"


def test_backoff_doubles_to_its_cap_and_resets() -> None:
    backoff = Backoff(jitter=no_jitter)
    delays = [backoff.next() for _ in range(9)]
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0]
    backoff.reset()
    assert backoff.next() == 0.8


def test_backoff_waits_are_jittered_as_client_gos_reflector_jitters_them() -> None:
    """Each wait is its step plus up to as much again; the steps double regardless of the
    draws, so at the cap the waits spread over [30 s, 60 s)."""
    draws = iter([0.5, 0.0, 0.999, 0.25, 0.5, 0.5, 0.5, 0.0, 0.999])
    backoff = Backoff(jitter=lambda: next(draws))
    delays = [backoff.next() for _ in range(9)]
    assert delays == [1.2, 1.6, 6.397, 8.0, 19.2, 38.4, 45.0, 30.0, 59.97]


async def test_an_informers_retry_waits_are_jittered(sim: SimCluster, clock: FakeClock) -> None:
    sim.fail_next("list", "nodes", APIError(503, "unavailable"))
    informer = informer_for(sim, clock, Recorder(), resource="nodes", jitter=lambda: 0.5)
    async with Running(informer):
        assert clock.next_deadline() == pytest.approx(clock.now() + 1.2)


class _AlwaysGone:
    """A client whose every watch expires at once, to check the informer does not spin."""

    def __init__(self, sim: SimCluster) -> None:
        self.sim = sim
        self.lists = 0
        self.error: APIError = GoneError("always")

    async def list(self, resource: str, **kwargs: Any) -> Any:
        self.lists += 1
        return await self.sim.list(resource, **kwargs)

    async def _gone(self) -> AsyncIterator[WatchEvent]:
        raise self.error
        yield  # pragma: no cover - makes this an async generator

    def watch(self, resource: str, **_: Any) -> AsyncIterator[WatchEvent]:
        return self._gone()


async def test_repeated_gone_without_progress_backs_off(sim: SimCluster, clock: FakeClock) -> None:
    client = _AlwaysGone(sim)
    informer = Informer(client, "pods", clock=clock, jitter=no_jitter)  # type: ignore[arg-type]
    async with Running(informer):
        assert client.lists == 2  # the first Gone relists at once, the second waits
        assert clock.next_deadline() == pytest.approx(clock.now() + 0.8)
        clock.advance(0.8)
        await settle()
        assert client.lists == 3


class _CountingLists:
    """The in-memory cluster, counting lists and able to hold the next one back."""

    def __init__(self, sim: SimCluster) -> None:
        self.sim = sim
        self.lists = 0
        self.hold: asyncio.Event | None = None

    async def list(self, resource: str, **kwargs: Any) -> Any:
        self.lists += 1
        if self.hold is not None:
            await self.hold.wait()
        return await self.sim.list(resource, **kwargs)

    def watch(self, resource: str, **kwargs: Any) -> AsyncIterator[WatchEvent]:
        return self.sim.watch(resource, **kwargs)


async def test_relist_returns_once_a_fresh_list_is_in_the_store(
    sim: SimCluster, clock: FakeClock
) -> None:
    client = _CountingLists(sim)
    recorder = Recorder()
    informer = informer_for(client, clock, recorder)  # type: ignore[arg-type]
    async with Running(informer):
        assert client.lists == 1
        client.hold = asyncio.Event()
        relisted = asyncio.create_task(informer.relist())
        await settle()
        assert client.lists == 2 and not relisted.done()
        await sim.create("pods", make_pod("late").dict())  # while the relist is held back
        client.hold.set()
        await asyncio.wait_for(relisted, 5)
        assert informer.store.get("default", "late") is not None
        assert ("add", "late") in recorder.take()
        await settle()
        assert informer.has_synced


async def test_a_relist_asked_for_during_a_list_waits_for_the_next_one(
    sim: SimCluster, clock: FakeClock
) -> None:
    client = _CountingLists(sim)
    client.hold = asyncio.Event()
    informer = Informer(client, "pods", clock=clock)  # type: ignore[arg-type]
    async with Running(informer):
        assert client.lists == 1  # the first list, held back
        relisted = asyncio.create_task(informer.relist())
        await settle()
        client.hold.set()
        await settle()
        # The list under way began before the request: it does not count.
        assert client.lists == 2
        await asyncio.wait_for(relisted, 5)


async def test_relist_cuts_a_backoff_wait_short(sim: SimCluster, clock: FakeClock) -> None:
    """After an outage the informer may be in a long wait; a new leader asking for a fresh
    list gets it at once, not when the wait ends."""
    client = _CountingLists(sim)
    for _ in range(5):
        sim.fail_next("list", "pods", APIError(0, "connection refused"))
    informer = informer_for(client, clock, Recorder())  # type: ignore[arg-type]
    async with Running(informer):
        for wait in (0.8, 1.6, 3.2, 6.4):
            clock.advance(wait)
            await settle()
        assert client.lists == 5 and not informer.has_synced
        assert clock.next_deadline() == pytest.approx(clock.now() + 12.8)
        await sim.create("pods", make_pod("meanwhile").dict())  # the server is back
        relisted = asyncio.create_task(informer.relist())
        await settle()
        assert relisted.done(), "the relist waited out the backoff"
        await relisted
        assert client.lists == 6
        assert informer.store.get("default", "meanwhile") is not None
        assert clock.pending_timers == 0  # the wait is gone with it


@pytest.mark.parametrize("failure", ["watch-error", "gone-twice"])
async def test_relist_cuts_short_a_wait_after_a_failed_watch(
    sim: SimCluster, clock: FakeClock, failure: str
) -> None:
    client = _AlwaysGone(sim)
    informer = Informer(client, "pods", clock=clock, jitter=no_jitter)  # type: ignore[arg-type]
    if failure == "watch-error":
        client.error = APIError(500, "boom")
    async with Running(informer):
        lists = client.lists
        assert clock.next_deadline() is not None  # waiting before it connects again
        relisted = asyncio.create_task(informer.relist())
        await settle()
        assert relisted.done(), "the relist waited out the backoff"
        await relisted
        assert client.lists == lists + 1


async def test_a_watch_the_server_ends_on_time_is_reopened_at_once(
    sim: SimCluster, clock: FakeClock
) -> None:
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder)
    async with Running(informer):
        clock.advance(30)  # the server-side timeout of a quiet watch
        sim.end_watches("pods")
        await settle()
        await sim.create("pods", make_pod("after").dict())
        await settle()
        assert recorder.take() == [("add", "after")]  # no backoff wait in between


def test_store_index_follows_puts_and_pops() -> None:
    def team(obj: dict[str, Any]) -> str | None:
        return (obj["metadata"].get("labels") or {}).get("team")

    store = InformerStore()
    a = {"metadata": {"namespace": "ns", "name": "a", "labels": {"team": "x"}}}
    store.put(a)
    store.add_index("team", team)  # built from what is already stored
    store.put({"metadata": {"namespace": "ns", "name": "b", "labels": {"team": "x"}}})
    store.put({"metadata": {"namespace": "ns", "name": "c"}})
    assert sorted(o["metadata"]["name"] for o in store.by_index("team", "x")) == ["a", "b"]
    store.put({"metadata": {"namespace": "ns", "name": "a", "labels": {"team": "y"}}})
    assert [o["metadata"]["name"] for o in store.by_index("team", "x")] == ["b"]
    assert [o["metadata"]["name"] for o in store.by_index("team", "y")] == ["a"]
    store.pop(("ns", "b"))
    assert store.by_index("team", "x") == []


class _NotFoundAfterFirstList(_CountingLists):
    """A server that, restarting, answers 404 for a resource it served a moment ago."""

    async def list(self, resource: str, **kwargs: Any) -> Any:
        if self.lists:
            self.lists += 1
            raise NotFoundError("the server could not find the requested resource")
        return await super().list(resource, **kwargs)

    def watch(self, resource: str, **kwargs: Any) -> AsyncIterator[WatchEvent]:
        return self._gone()

    async def _gone(self) -> AsyncIterator[WatchEvent]:
        raise GoneError("restarting")
        yield  # pragma: no cover - makes this an async generator


async def test_a_404_after_a_successful_list_keeps_the_store(
    sim: SimCluster, clock: FakeClock
) -> None:
    await sim.create("pods", make_pod("bound").node("n1").dict())
    client = _NotFoundAfterFirstList(sim)
    recorder = Recorder()
    informer = informer_for(client, clock, recorder)  # type: ignore[arg-type]
    async with Running(informer):
        await settle()
        assert client.lists >= 2  # listed, then asked again and got a 404
        assert informer.store.get("default", "bound") is not None
        assert recorder.take() == [("add", "bound")]  # no delete


def test_held_handler_calls_wait_and_are_made_in_order_on_release(
    sim: SimCluster, clock: FakeClock
) -> None:
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder)

    def pod(name: str, version: str) -> dict[str, Any]:
        return {"metadata": {"namespace": "default", "name": name, "resourceVersion": version}}

    informer.hold()
    informer.apply(WatchEvent("ADDED", pod("a", "1")))
    informer.apply(WatchEvent("MODIFIED", pod("a", "2")))
    informer.apply(WatchEvent("DELETED", pod("a", "3")))
    informer.apply(WatchEvent("ADDED", pod("b", "4")))
    # The store follows the cluster at once; only the handlers wait.
    assert recorder.take() == []
    assert [key[1] for key in informer.store.object_keys()] == ["b"]
    informer.release()
    assert recorder.take() == [("add", "a"), ("update", "a"), ("delete", "a"), ("add", "b")]
    informer.apply(WatchEvent("DELETED", pod("b", "5")))
    assert recorder.take() == [("delete", "b")]


async def test_objects_enter_the_store_without_managed_fields(
    sim: SimCluster, clock: FakeClock
) -> None:
    managed = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}]
    listed = make_pod("a").dict()
    listed["metadata"]["managedFields"] = managed
    await sim.create("pods", listed)
    recorder = Recorder()
    informer = informer_for(sim, clock, recorder)
    async with Running(informer):
        watched = make_pod("b").dict()
        watched["metadata"]["managedFields"] = managed
        await sim.create("pods", watched)
        await settle()
        for name in ("a", "b"):
            stored = informer.store.get("default", name)
            assert stored is not None
            assert "managedFields" not in stored["metadata"]
            assert stored["metadata"]["name"] == name
    # The objects the cluster handed out are left as they were.
    assert all("managedFields" in obj["metadata"] for obj in sim.objects("pods"))


def test_the_store_says_which_objects_changed_since_a_revision() -> None:
    store = InformerStore()
    start = store.revision
    store.put({"metadata": {"namespace": "ns", "name": "a"}})
    store.put({"metadata": {"namespace": "ns", "name": "b"}})
    middle = store.revision
    store.put({"metadata": {"namespace": "ns", "name": "a", "labels": {"x": "y"}}})
    store.pop(("ns", "b"))
    store.pop(("ns", "missing"))  # nothing was there: no change
    assert store.changed_since(start) == [("ns", "a"), ("ns", "b"), ("ns", "a"), ("ns", "b")]
    assert store.changed_since(middle) == [("ns", "a"), ("ns", "b")]
    assert store.changed_since(store.revision) == []
