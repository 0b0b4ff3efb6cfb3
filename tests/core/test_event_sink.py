"""The event sink: nothing lost under load, repeats as series, retries as the server asks."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from contextlib import asynccontextmanager
from typing import Any

import pytest

from scheduler.core.event_sink import MAX_ATTEMPTS
from scheduler.core.event_sink import RETRY_CAP
from scheduler.core.event_sink import SERIES_FINISH
from scheduler.core.event_sink import SERIES_REFRESH
from scheduler.core.event_sink import EventSink
from scheduler.core.event_sink import isomorphic_key
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.observability import SchedulerMetrics
from scheduler.testing import FakeClock


class Writer:
    """An API that records what reached it and fails the next calls when told to."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.patches: list[tuple[str, str, dict[str, Any]]] = []
        self.failures: list[APIError] = []
        self.gate: asyncio.Event | None = None

    async def create_event(self, event: Mapping[str, Any]) -> None:
        if self.gate is not None:
            await self.gate.wait()
        if self.failures:
            raise self.failures.pop(0)
        self.created.append(dict(event))

    async def patch_object(
        self, resource: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None:
        assert resource == "events"
        if self.failures:
            raise self.failures.pop(0)
        self.patches.append((namespace, name, dict(patch)))


def event(pod: str, reason: str = "FailedScheduling", note: str = "0/1 nodes") -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": f"{pod}.{reason}"},
        "type": "Warning" if reason == "FailedScheduling" else "Normal",
        "reason": reason,
        "action": "Scheduling",
        "note": note,
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-a",
        "regarding": {"kind": "Pod", "namespace": "ns", "name": pod, "uid": f"uid-{pod}"},
    }


async def settle(done: Callable[[], bool] = lambda: False, rounds: int = 200) -> None:
    for _ in range(rounds):
        if done():
            return
        await asyncio.sleep(0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def writer() -> Writer:
    return Writer()


@pytest.fixture
def metrics() -> SchedulerMetrics:
    return SchedulerMetrics()


@asynccontextmanager
async def running(
    writer: Writer, clock: FakeClock, metrics: SchedulerMetrics, *, workers: int = 2
) -> AsyncIterator[EventSink]:
    sink = EventSink(writer, clock, metrics=metrics, capacity=4, workers=workers)
    sink.start()
    try:
        yield sink
    finally:
        await sink.stop()


@pytest.fixture
async def sink(
    writer: Writer, clock: FakeClock, metrics: SchedulerMetrics
) -> AsyncIterator[EventSink]:
    async with running(writer, clock, metrics) as sink:
        yield sink


def dropped(metrics: SchedulerMetrics, reason: str) -> float:
    value = metrics.registry.get_sample_value("scheduler_events_dropped_total", {"reason": reason})
    return value or 0.0


async def test_events_are_written_in_order(sink: EventSink, writer: Writer) -> None:
    for pod in ("a", "b", "c"):
        sink.submit(event(pod))
    await sink.drain()
    assert [e["regarding"]["name"] for e in writer.created] == ["a", "b", "c"]
    assert sink.pending == 0


def test_the_key_ignores_the_note_as_client_go_does() -> None:
    assert isomorphic_key(event("a", note="x")) == isomorphic_key(event("a", note="y"))
    assert isomorphic_key(event("a")) != isomorphic_key(event("b"))
    assert isomorphic_key(event("a")) != isomorphic_key(event("a", reason="Scheduled"))


def test_the_key_tells_versions_of_the_object_apart_as_client_go_does() -> None:
    first, later = event("a"), event("a")
    first["regarding"]["resourceVersion"] = "7"
    later["regarding"]["resourceVersion"] = "9"
    assert isomorphic_key(first) != isomorphic_key(later)
    assert isomorphic_key(first) == isomorphic_key({**event("a"), "regarding": first["regarding"]})


async def test_a_repeat_while_queued_is_written_once_as_a_series(
    writer: Writer, clock: FakeClock
) -> None:
    sink = EventSink(writer, clock, capacity=4, workers=1)
    sink.submit(event("a"))
    sink.submit(event("a", note="later"))
    sink.submit(event("a"))
    sink.start()
    await sink.drain()
    await sink.stop()
    [created] = writer.created
    assert created["series"]["count"] == 3
    assert created["note"] == "0/1 nodes"  # the first occurrence's words, as upstream keeps


async def test_the_second_occurrence_patches_the_series_and_later_ones_wait_for_the_refresh(
    sink: EventSink, writer: Writer, clock: FakeClock
) -> None:
    sink.submit(event("a"))
    await sink.drain()
    clock.advance(1)
    sink.submit(event("a"))
    await sink.drain()
    assert writer.patches == [
        ("ns", "a.FailedScheduling", {"series": {"count": 2, "lastObservedTime": _micro(clock)}})
    ]
    for _ in range(3):
        sink.submit(event("a"))
    await sink.drain()
    assert len(writer.patches) == 1  # counted, not yet written
    assert len(writer.created) == 1
    clock.advance(SERIES_REFRESH)
    sink.tend_series()
    await sink.drain()
    assert writer.patches[-1][2]["series"]["count"] == 5


async def test_a_long_series_is_written_once_per_refresh_period(
    sink: EventSink, writer: Writer, clock: FakeClock
) -> None:
    """A pod failing alike every 4 minutes for 90 minutes: its count is written when the
    series starts and then once per SERIES_REFRESH, not at every check after the first."""
    for minute in range(91):
        if minute % 4 == 0 or minute == 1:
            sink.submit(event("a"))
        if minute % 6 == 0:  # the sink's own check runs every SERIES_FINISH
            sink.tend_series()
        await sink.drain()
        clock.advance(60)
    written_at = [p[2]["series"]["count"] for p in writer.patches]
    assert len(writer.created) == 1
    assert written_at[0] == 2  # the second occurrence, at once
    # Then about one write per half hour over the 89 minutes left: 2 or 3, never one per check.
    assert 2 <= len(written_at) - 1 <= 3, written_at


@pytest.mark.parametrize("written_before_it_recurs", [True, False])
async def test_an_ended_series_is_written_a_last_time_and_forgotten(
    sink: EventSink, writer: Writer, clock: FakeClock, written_before_it_recurs: bool
) -> None:
    for _ in range(3):
        sink.submit(event("a"))
        await sink.drain()
    clock.advance(SERIES_FINISH)
    sink.tend_series()
    if written_before_it_recurs:
        await sink.drain()
    # After the series ended: a new Event, also while the last count waits for a writer.
    sink.submit(event("a"))
    await sink.drain()
    assert writer.patches[-1][2]["series"]["count"] == 3
    assert len(writer.created) == 2
    assert "series" not in writer.created[-1]


async def test_a_series_ends_only_once_its_waiting_write_is_made(
    writer: Writer, clock: FakeClock, metrics: SchedulerMetrics
) -> None:
    async with running(writer, clock, metrics, workers=1) as sink:
        sink.submit(event("a"))
        await sink.drain()
        writer.gate = asyncio.Event()
        sink.submit(event("b"))  # holds the only writer
        await settle(lambda: sink.pending == 1)
        sink.submit(event("a"))  # the second occurrence's patch waits for a writer
        clock.advance(SERIES_FINISH)
        sink.tend_series()  # ended, but not forgotten while its patch is still to be made
        sink.submit(event("a"))
        writer.gate.set()
        await sink.drain()
    assert [e["regarding"]["name"] for e in writer.created] == ["a", "b"]
    assert writer.patches[-1][2]["series"]["count"] == 3


@pytest.mark.parametrize("status", [0, 429, 500, 503])
async def test_retriable_failures_are_retried_with_backoff(
    sink: EventSink, writer: Writer, clock: FakeClock, status: int
) -> None:
    writer.failures = [APIError(status, "busy"), APIError(status, "busy")]
    sink.submit(event("a"))
    await settle(lambda: clock.pending_timers > 1)
    assert writer.created == []
    clock.advance(0.5)  # first retry after 0.5 s
    await settle(lambda: clock.pending_timers > 1 and not writer.failures[1:])
    clock.advance(0.99)
    await settle()
    assert writer.created == []
    clock.advance(0.01)  # second retry 1 s later
    await sink.drain()
    assert len(writer.created) == 1


async def test_the_server_s_retry_after_is_obeyed(
    sink: EventSink, writer: Writer, clock: FakeClock
) -> None:
    writer.failures = [APIError(429, "slow down", retry_after=7)]
    sink.submit(event("a"))
    await settle(lambda: not writer.failures)
    await settle()
    clock.advance(6.9)
    await settle()
    assert writer.created == []
    clock.advance(0.1)
    await sink.drain()
    assert len(writer.created) == 1


async def test_a_rejected_event_is_dropped_and_counted(
    sink: EventSink, writer: Writer, metrics: SchedulerMetrics
) -> None:
    writer.failures = [APIError(422, "invalid")]
    sink.submit(event("a"))
    sink.submit(event("b"))
    await sink.drain()
    assert [e["regarding"]["name"] for e in writer.created] == ["b"]
    assert dropped(metrics, "rejected") == 1


async def test_retries_end_after_client_go_s_twelve_attempts(
    sink: EventSink, writer: Writer, clock: FakeClock, metrics: SchedulerMetrics
) -> None:
    writer.failures = [APIError(500, "down")] * MAX_ATTEMPTS
    sink.submit(event("a"))
    for _ in range(MAX_ATTEMPTS):
        await settle()
        clock.advance(10)
    await sink.drain()
    assert writer.created == []
    assert dropped(metrics, "retries_exhausted") == 1


async def test_already_exists_means_an_earlier_attempt_got_through(
    sink: EventSink, writer: Writer, metrics: SchedulerMetrics, clock: FakeClock
) -> None:
    writer.failures = [ConflictError("already exists")]
    sink.submit(event("a"))
    await sink.drain()
    assert dropped(metrics, "rejected") == 0
    sink.submit(event("a"))  # a repeat: a series on the Event that exists
    await sink.drain()
    assert [p[2]["series"]["count"] for p in writer.patches] == [2]


async def test_waiting_producers_get_back_pressure_instead_of_drops(
    sink: EventSink, writer: Writer, metrics: SchedulerMetrics
) -> None:
    writer.gate = asyncio.Event()
    putters = [asyncio.create_task(sink.put(event(f"p{i}", reason="Scheduled"))) for i in range(8)]
    await settle()
    # Two in the workers' hands, four queued: the rest wait for room.
    assert sum(t.done() for t in putters) == 6
    writer.gate.set()
    await asyncio.gather(*putters)
    await sink.drain()
    assert len(writer.created) == 8
    assert dropped(metrics, "queue_full") == 0


async def test_a_full_queue_drops_what_cannot_wait_and_counts_it(
    sink: EventSink, writer: Writer, metrics: SchedulerMetrics
) -> None:
    writer.gate = asyncio.Event()
    for i in range(2):
        sink.submit(event(f"busy{i}"))
    await settle(lambda: sink.pending == 2 and not sink._queue)
    for i in range(4):
        sink.submit(event(f"q{i}"))
    sink.submit(event("q0"))  # a repeat still fits: it joins the queued one
    sink.submit(event("overflow"))
    assert dropped(metrics, "queue_full") == 1
    writer.gate.set()
    await sink.drain()
    assert len(writer.created) == 6


async def test_stop_drains_within_its_deadline_and_counts_the_rest(
    writer: Writer, clock: FakeClock, metrics: SchedulerMetrics
) -> None:
    sink = EventSink(writer, clock, metrics=metrics, capacity=10, workers=1)
    writer.gate = asyncio.Event()
    sink.start()
    for i in range(3):
        sink.submit(event(f"p{i}"))
    await settle()
    stopping = asyncio.create_task(sink.stop(deadline=2))
    await settle()
    assert not stopping.done()  # draining, for up to 2 s of the clock
    clock.advance(2)
    await stopping
    assert writer.created == []
    assert dropped(metrics, "shutdown") == 3  # one of them was in a worker's hands


async def test_stop_returns_as_soon_as_the_queue_is_drained(
    writer: Writer, clock: FakeClock, metrics: SchedulerMetrics
) -> None:
    sink = EventSink(writer, clock, metrics=metrics, capacity=10, workers=1)
    sink.start()
    for i in range(3):
        sink.submit(event(f"p{i}"))
    await sink.stop(deadline=60)
    assert len(writer.created) == 3
    assert dropped(metrics, "shutdown") == 0


async def test_a_write_waiting_to_retry_holds_no_writer(writer: Writer, clock: FakeClock) -> None:
    sink = EventSink(writer, clock, capacity=4, workers=1)
    sink.start()
    writer.failures = [APIError(503, "restarting")]
    sink.submit(event("a"))
    await settle(lambda: not writer.failures)
    sink.submit(event("b"))
    await settle(lambda: bool(writer.created))
    assert [e["regarding"]["name"] for e in writer.created] == ["b"]
    assert sink.pending == 1  # a, waiting out its delay
    clock.advance(0.5)
    await sink.drain()
    assert [e["regarding"]["name"] for e in writer.created] == ["b", "a"]
    await sink.stop()


async def test_a_retry_absorbs_repeats_of_its_event(writer: Writer, clock: FakeClock) -> None:
    sink = EventSink(writer, clock, capacity=4, workers=1)
    sink.start()
    writer.failures = [APIError(503, "restarting")]
    sink.submit(event("a"))
    await settle(lambda: not writer.failures)
    sink.submit(event("a"))
    clock.advance(0.5)
    await sink.drain()
    [created] = writer.created
    assert created["series"]["count"] == 2
    await sink.stop()


async def test_placements_are_written_ahead_of_failures(writer: Writer, clock: FakeClock) -> None:
    sink = EventSink(writer, clock, capacity=10, workers=1)
    for i in range(3):
        sink.submit(event(f"f{i}"))
    await sink.put(event("s", reason="Scheduled"))
    sink.start()
    await sink.drain()
    assert [e["regarding"]["name"] for e in writer.created] == ["s", "f0", "f1", "f2"]
    await sink.stop()


async def test_stop_counts_writes_waiting_to_retry_as_dropped(
    writer: Writer, clock: FakeClock, metrics: SchedulerMetrics
) -> None:
    sink = EventSink(writer, clock, metrics=metrics, capacity=4, workers=1)
    sink.start()
    writer.failures = [APIError(503, "restarting")]
    sink.submit(event("a"))
    await settle(lambda: not writer.failures)
    await sink.stop()
    assert dropped(metrics, "shutdown") == 1
    assert clock.pending_timers == 0


def _micro(clock: FakeClock) -> str:
    return clock.wall().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SlowServer(Writer):
    """An API whose calls of the kinds in `holding` land only when the test releases them,
    that keeps the Events it created and answers a patch of any other Event with NotFound, as
    the API server does."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.holding = {"create"}
        self.landing: deque[asyncio.Future[None]] = deque()

    async def create_event(self, event: Mapping[str, Any]) -> None:
        await self._arrive("create")
        await super().create_event(event)

    async def patch_object(
        self, resource: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None:
        await self._arrive("patch")
        if not any(e["metadata"]["name"] == name for e in self.created):
            raise NotFoundError(f"events {name!r} not found")
        await super().patch_object(resource, namespace, name, patch)

    async def _arrive(self, call: str) -> None:
        self.calls.append(call)
        if call in self.holding:
            landed = asyncio.get_running_loop().create_future()
            self.landing.append(landed)
            await landed

    async def land(self, failure: APIError | None = None) -> None:
        """Let the oldest call held return, failing with `failure` if given."""
        await settle(lambda: bool(self.landing))
        assert self.landing, "no call held"
        if failure is not None:
            self.failures.insert(0, failure)
        landed = self.landing.popleft()
        landed.set_result(None)
        await settle()


@pytest.fixture
def server() -> SlowServer:
    return SlowServer()


@pytest.fixture
async def slow_sink(
    server: SlowServer, clock: FakeClock, metrics: SchedulerMetrics
) -> AsyncIterator[EventSink]:
    async with running(server, clock, metrics) as sink:
        yield sink


async def repeat_while_creating(sink: EventSink, server: SlowServer) -> None:
    """Hand over an Event and, once its create is in flight, a repeat of it."""
    sink.submit(event("a"))
    await settle(lambda: bool(server.landing))
    sink.submit(event("a", note="again"))
    await settle()
    assert server.calls == ["create"]  # no second Event, and no patch before the create lands


async def test_a_repeat_while_the_create_is_in_flight_becomes_a_series_on_that_event(
    slow_sink: EventSink, server: SlowServer, clock: FakeClock
) -> None:
    await repeat_while_creating(slow_sink, server)
    await server.land()
    await slow_sink.drain()
    assert server.calls == ["create", "patch"]
    [created] = server.created
    assert "series" not in created
    assert server.patches == [
        ("ns", "a.FailedScheduling", {"series": {"count": 2, "lastObservedTime": _micro(clock)}})
    ]
    for _ in range(3):
        slow_sink.submit(event("a"))
    await slow_sink.drain()
    assert server.calls == ["create", "patch"]  # later occurrences only count
    clock.advance(SERIES_REFRESH)
    slow_sink.tend_series()
    await slow_sink.drain()
    assert server.calls == ["create", "patch", "patch"]
    assert server.patches[-1][2]["series"]["count"] == 5


async def test_one_series_write_at_a_time_so_counts_reach_the_server_in_order(
    slow_sink: EventSink, server: SlowServer, clock: FakeClock
) -> None:
    server.holding = {"patch"}
    slow_sink.submit(event("a"))
    await slow_sink.drain()
    slow_sink.submit(event("a"))
    await settle(lambda: bool(server.landing))
    slow_sink.submit(event("a"))  # while the second occurrence's patch is in flight
    await settle()
    assert server.calls == ["create", "patch"]
    await server.land()
    await slow_sink.drain()
    assert [p[2]["series"]["count"] for p in server.patches] == [2]  # the third only counts
    clock.advance(SERIES_FINISH)
    slow_sink.tend_series()
    await server.land()
    await slow_sink.drain()
    assert [p[2]["series"]["count"] for p in server.patches] == [2, 3]


async def test_an_ended_series_waits_for_its_create_in_flight(
    slow_sink: EventSink, server: SlowServer, clock: FakeClock
) -> None:
    await repeat_while_creating(slow_sink, server)
    clock.advance(SERIES_FINISH)
    slow_sink.tend_series()  # the series has ended, but its Event is not written yet
    await settle()
    assert server.calls == ["create"]
    await server.land()
    await slow_sink.drain()
    assert server.calls == ["create", "patch"]
    assert server.patches[-1][2]["series"]["count"] == 2


async def test_a_retried_create_carries_the_repeats_seen_while_it_was_in_flight(
    slow_sink: EventSink, server: SlowServer, clock: FakeClock
) -> None:
    await repeat_while_creating(slow_sink, server)
    await server.land(APIError(503, "restarting"))
    slow_sink.submit(event("a"))  # while it waits to retry
    clock.advance(0.5)
    await server.land()
    await slow_sink.drain()
    assert server.calls == ["create", "create"]
    [created] = server.created
    assert created["series"]["count"] == 3


async def test_a_series_outlives_a_create_that_gave_up_and_creates_the_event_with_its_count(
    slow_sink: EventSink, server: SlowServer, clock: FakeClock, metrics: SchedulerMetrics
) -> None:
    # As upstream: the series stays when its create gives up, and its write, meeting NotFound,
    # creates the Event with every occurrence counted once the server is back.
    await repeat_while_creating(slow_sink, server)
    for _ in range(MAX_ATTEMPTS):
        await server.land(APIError(503, "unavailable"))
        clock.advance(RETRY_CAP)
    assert dropped(metrics, "retries_exhausted") == 1
    await server.land()  # the series' write, meeting NotFound, creates the Event
    await slow_sink.drain()
    assert server.calls == ["create"] * MAX_ATTEMPTS + ["patch", "create"]
    [created] = server.created
    assert created["metadata"]["name"] == "a.FailedScheduling"
    assert created["series"]["count"] == 2
    assert server.patches == []


async def test_a_series_whose_event_is_gone_creates_it_again(
    sink: EventSink, writer: Writer, clock: FakeClock
) -> None:
    sink.submit(event("a"))
    await sink.drain()
    writer.failures = [NotFoundError("expired")]  # the Event outlived its TTL on the server
    sink.submit(event("a"))
    await sink.drain()
    assert [e.get("series", {}).get("count") for e in writer.created] == [None, 2]
    sink.submit(event("a"))
    clock.advance(SERIES_REFRESH)
    sink.tend_series()
    await sink.drain()
    assert [p[2]["series"]["count"] for p in writer.patches] == [3]


async def test_a_re_creation_that_finds_the_event_back_patches_it_later(
    sink: EventSink, writer: Writer, clock: FakeClock
) -> None:
    sink.submit(event("a"))
    await sink.drain()
    writer.failures = [NotFoundError("gone"), ConflictError("already exists")]
    sink.submit(event("a"))
    await settle(lambda: not writer.failures and clock.pending_timers > 1)
    clock.advance(0.5)
    await sink.drain()
    assert len(writer.created) == 1
    assert [p[2]["series"]["count"] for p in writer.patches] == [2]
