"""Writing Events to the API server without losing them under load.

The scheduling cycle hands Events over and never waits for the API. The sink keeps them in a
bounded queue served by writer tasks on a client of their own (its own rate budget, so a burst
of Bindings neither starves Events nor is slowed by them), and:

- correlates as client-go's events.k8s.io broadcaster does: an Event isomorphic to one already
  handed to a writer (same type, reason, action, reporting controller and instance, regarding
  and related objects) becomes a series on that Event instead of a new object, also while its
  create is in flight. The second occurrence patches `series` at once; later ones only count,
  and the count is written `SERIES_REFRESH` after its last write (upstream refreshes every
  series each half hour) and when the series ends (no occurrence for `SERIES_FINISH`). An
  Event has one write under way at a time, so a patch never overtakes its create or an earlier
  count. A series whose Event the server does not have (its create gave
  up, or the Event expired or was deleted) is written by creating the Event with its series,
  as upstream does;
- retries what the server may accept later (no answer, 429, 5xx) up to `MAX_ATTEMPTS` times,
  waiting the server's Retry-After when it sends one and a capped backoff otherwise, off the
  writers (a write waiting to retry holds no writer, so an outage's backlog does not block the
  Events after it); a create that meets "already exists" was written by an earlier attempt
  whose answer was lost;
- writes Events handed over by `put` (a pod's `Scheduled`) before those of `submit`
  (`FailedScheduling`, which repeats and is correlated): a pod's placement is what must not
  wait behind a burst of failures;
- applies back-pressure to callers that can wait (`put`, from binding cycles) and, for callers
  that cannot (`submit`, from the synchronous scheduling cycle), drops only when the queue is
  full even after correlation, counting every drop by reason in
  `scheduler_events_dropped_total`;
- drains on shutdown within a deadline.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from typing import Protocol

from scheduler.framework.clock import Clock
from scheduler.framework.clock import Timer
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.observability import SchedulerMetrics
from scheduler.observability import get_logger

log = get_logger("events")

DEFAULT_CAPACITY = 10_000
# Writers in flight at once. client-go writes each Event from a goroutine of its own, bounded
# only by the rate limiter; the writers must cover qps x request latency, and a latency of a
# second on a loaded API server is seen (50 qps x 1 s). Idle writers cost next to nothing.
DEFAULT_WORKERS = 64
# client-go tries an Event 12 times before it gives up on it.
MAX_ATTEMPTS = 12
RETRY_BASE = 0.5
RETRY_CAP = 10.0
# client-go's series bookkeeping: counts are written every 30 minutes, and a series with no
# occurrence for 6 minutes is finished (written a last time and forgotten).
SERIES_REFRESH = 30 * 60.0
SERIES_FINISH = 6 * 60.0

EventKey = tuple[str, ...]
# An ObjectReference's fields, all of which tell two Events' objects apart.
_REFERENCE_FIELDS = (
    "apiVersion",
    "kind",
    "namespace",
    "name",
    "uid",
    "resourceVersion",
    "fieldPath",
)
# Appended to an ended series' key for its last count, which no later occurrence shares.
FINAL_WRITE = "final"


class EventWriter(Protocol):
    async def create_event(self, event: Mapping[str, Any]) -> None: ...

    async def patch_object(
        self, resource: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None: ...


def isomorphic_key(event: Mapping[str, Any]) -> EventKey:
    """What makes two Events the same occurrence repeated (client-go's eventKey): the whole
    references included, so Events about a pod before and after its status changed (a
    FailedScheduling, then the condition it patched) are two series, as upstream counts them."""
    regarding = event.get("regarding") or {}
    related = event.get("related") or {}
    return (
        str(event.get("type") or ""),
        str(event.get("action") or ""),
        str(event.get("reason") or ""),
        str(event.get("reportingController") or ""),
        str(event.get("reportingInstance") or ""),
        *(str(regarding.get(k) or "") for k in _REFERENCE_FIELDS),
        *(str(related.get(k) or "") for k in _REFERENCE_FIELDS),
    )


@dataclass(slots=True)
class _Series:
    """An Event handed to a writer, and how often it has recurred since."""

    namespace: str
    name: str
    # The Event as handed over, to create it anew should the server not have it.
    body: dict[str, Any]
    # When the Event or its count was last written: a count is due again SERIES_REFRESH later.
    written_at: float
    count: int = 1
    written_count: int = 1
    last_observed: float = 0.0
    last_observed_wall: str = ""
    # A write of this Event (its create, or a series write) has begun and not yet ended, in a
    # writer's hands or waiting to retry: the next write waits for it, so none overtakes it.
    writing: bool = True


@dataclass(slots=True)
class _Write:
    """One API write: the creation of an Event, or a patch of its series."""

    key: EventKey
    body: dict[str, Any] | None = None
    series: _Series | None = None
    attempts: int = 0
    urgent: bool = False


class EventSink:
    def __init__(
        self,
        client: EventWriter,
        clock: Clock,
        *,
        metrics: SchedulerMetrics | None = None,
        capacity: int = DEFAULT_CAPACITY,
        workers: int = DEFAULT_WORKERS,
    ) -> None:
        self._client = client
        self._clock = clock
        self._metrics = metrics
        self._capacity = capacity
        self._workers = workers
        # Writes waiting, oldest first, `put` ones ahead; a key appears once (an Event not yet
        # written absorbs its repeats in place), and so in `_retrying`, where writes wait out a
        # retry delay.
        self._urgent: OrderedDict[EventKey, _Write] = OrderedDict()
        self._queue: OrderedDict[EventKey, _Write] = OrderedDict()
        self._retrying: dict[EventKey, tuple[_Write, Timer]] = {}
        self._series: dict[EventKey, _Series] = {}
        self._in_progress = 0
        # Events and futures rather than Conditions: producers are synchronous and cannot take
        # a lock. Each idle worker waits on its own future, so a write wakes one worker, not all.
        self._sleeping: deque[asyncio.Future[None]] = deque()
        self._has_room = asyncio.Event()
        self._has_room.set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._tasks: list[asyncio.Task[None]] = []

    # -- producers -----------------------------------------------------------------------------

    def submit(self, event: dict[str, Any]) -> None:
        """Hand an Event over without waiting; it is dropped (and counted) only if the queue
        is full even after correlating it with what is already there."""
        key = isomorphic_key(event)
        if self._absorb(key, event):
            return
        if self._queued >= self._capacity:
            self._dropped("queue_full", event)
            return
        self._enqueue(_Write(key, body=event))

    async def put(self, event: dict[str, Any]) -> None:
        """Hand an Event over, waiting for room in the queue if it is full."""
        key = isomorphic_key(event)
        if self._absorb(key, event):
            return
        while self._queued >= self._capacity:
            self._has_room.clear()
            await self._has_room.wait()
        if not self._absorb(key, event):
            self._enqueue(_Write(key, body=event, urgent=True))

    @property
    def pending(self) -> int:
        """Writes queued, waiting to retry or in progress."""
        return self._queued + self._in_progress

    @property
    def _queued(self) -> int:
        return len(self._urgent) + len(self._queue) + len(self._retrying)

    def _waiting(self, key: EventKey) -> _Write | None:
        """The write of `key` not yet made, if any."""
        write = self._urgent.get(key) or self._queue.get(key)
        if write is None and key in self._retrying:
            write = self._retrying[key][0]
        return write

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        if self._tasks:
            return
        self._tasks = [
            asyncio.create_task(self._work(), name=f"event-writer-{i}")
            for i in range(self._workers)
        ]
        self._tasks.append(asyncio.create_task(self._keep_series(), name="event-series"))

    async def drain(self) -> None:
        """Until every queued write has been made or given up."""
        await self._idle.wait()

    async def stop(self, deadline: float = 0.0) -> None:
        """Drain for up to `deadline` seconds, then stop; what is left is counted as dropped."""
        if deadline > 0 and self._tasks:
            drained = asyncio.ensure_future(self.drain())
            waited = asyncio.ensure_future(self._clock.sleep(deadline))
            try:
                await asyncio.wait((drained, waited), return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (drained, waited):
                    task.cancel()
                await asyncio.gather(drained, waited, return_exceptions=True)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        for write, timer in self._retrying.values():
            timer.cancel()
            self._urgent[write.key] = write
        for write in [*self._urgent.values(), *self._queue.values()]:
            if write.body is not None:
                self._dropped("shutdown", write.body)
        self._urgent.clear()
        self._queue.clear()
        self._retrying.clear()

    # -- correlation ---------------------------------------------------------------------------

    def _absorb(self, key: EventKey, event: Mapping[str, Any]) -> bool:
        """Fold `event` (whose isomorphic key is `key`) into an isomorphic Event if there is
        one; True if it was."""
        series = self._series.get(key)
        if series is None:
            queued = self._waiting(key)
            if queued is None or queued.body is None:
                return False
            # Not handed to a writer yet: the queued Event stands for this occurrence too.
            _count_in(queued.body, self._clock)
            return True
        series.count += 1
        series.last_observed = self._clock.now()
        series.last_observed_wall = _micro_time(self._clock.wall())
        self._patch_second_occurrence(key, series)
        return True

    def _patch_second_occurrence(self, key: EventKey, series: _Series) -> None:
        # client-go writes the second occurrence at once; later ones wait for the refresh. While
        # the Event's create (or an earlier series write) is under way, it waits (`_finished`).
        second = series.written_count == 1 and series.count > 1
        if second and not series.writing and self._waiting(key) is None:
            self._enqueue(_Write(key, series=series))

    def _enqueue(self, write: _Write) -> None:
        (self._urgent if write.urgent else self._queue)[write.key] = write
        self._idle.clear()
        while self._sleeping:
            waiter = self._sleeping.popleft()
            if not waiter.done():
                waiter.set_result(None)
                break

    def _retry_later(self, write: _Write, delay: float) -> None:
        def due() -> None:
            self._retrying.pop(write.key, None)
            self._enqueue(write)

        self._retrying[write.key] = (write, self._clock.call_later(delay, due))

    def _next(self) -> _Write | None:
        for queue in (self._urgent, self._queue):
            if queue:
                return queue.popitem(last=False)[1]
        return None

    # -- workers -------------------------------------------------------------------------------

    async def _work(self) -> None:
        while True:
            write = self._next()
            while write is None:
                waiter = asyncio.get_running_loop().create_future()
                self._sleeping.append(waiter)
                await waiter
                write = self._next()
            self._in_progress += 1
            self._has_room.set()
            try:
                await self._write(write)
            except asyncio.CancelledError:
                if write.body is not None:
                    self._dropped("shutdown", write.body)
                raise
            finally:
                self._in_progress -= 1
                if self._queued == 0 and self._in_progress == 0:
                    self._idle.set()

    async def _write(self, write: _Write) -> None:
        write.attempts += 1
        failure: APIError
        try:
            await self._attempt(write)
            self._finished(write, written=True)
            return
        except ConflictError as error:
            if write.body is not None:
                # The Event exists: an earlier attempt got through but its answer was lost.
                self._finished(write, written=True)
                return
            # A series re-creating its Event found it back (upstream retries too): the next
            # attempt patches it.
            failure, retriable = error, True
        except APIError as error:
            failure, retriable = error, error.retriable
        if retriable and write.attempts < MAX_ATTEMPTS:
            self._retry_later(write, _retry_delay(failure, write.attempts))
            return
        log.warning(
            "unable to write event",
            regarding=_describe(write),
            attempts=write.attempts,
            err=str(failure),
        )
        if write.body is not None:
            self._dropped("retries_exhausted" if retriable else "rejected", write.body)
        self._finished(write, written=False)

    async def _attempt(self, write: _Write) -> None:
        if write.body is not None:
            self._hand_over(write.key, write.body)
            await self._client.create_event(write.body)
            return
        series = write.series
        assert series is not None
        series.writing = True
        count = series.count
        patch = {"series": {"count": count, "lastObservedTime": series.last_observed_wall}}
        try:
            await self._client.patch_object("events", series.namespace, series.name, patch)
        except NotFoundError:
            # As upstream: the Event is not on the server (its create failed, or it expired or
            # was deleted), so the series writes it anew, every occurrence counted.
            await self._client.create_event({**series.body, **patch})
        series.written_count = count
        series.written_at = self._clock.now()

    def _hand_over(self, key: EventKey, body: dict[str, Any]) -> None:
        """From here on the Event's repeats are counted in its series, not folded into it."""
        series = self._series.get(key)
        if series is None:
            meta = body.get("metadata") or {}
            now = self._clock.now()
            folded = body.get("series") or {}
            series = self._series[key] = _Series(
                namespace=str(meta.get("namespace") or ""),
                name=str(meta.get("name") or ""),
                body=body,
                written_at=now,
                count=int(folded.get("count") or 1),
                last_observed=now,
                # Blank unless repeats were folded in: only a series write sends it, and every
                # occurrence that makes one due (`_absorb`) sets it first. Formatting a time per
                # Event written costs more than the rest of this bookkeeping.
                last_observed_wall=str(folded.get("lastObservedTime") or ""),
            )
        elif series.count > 1:
            # A retry: the occurrences seen since the first attempt are created with it.
            body["series"] = {"count": series.count, "lastObservedTime": series.last_observed_wall}
        series.written_count = series.count

    def _finished(self, write: _Write, *, written: bool) -> None:
        """`write` has reached the server or been given up: the next write of its Event may go."""
        series = write.series or self._series.get(write.key)
        if series is None:
            return
        series.writing = False
        if write.body is None:
            return  # a series write: the occurrences since wait for the refresh
        if not written:
            # Nothing reached the server. The series stays, as in upstream's cache: its next
            # write meets NotFound and creates the Event with every occurrence counted.
            series.written_count = 1
        self._patch_second_occurrence(write.key, series)

    # -- series upkeep -------------------------------------------------------------------------

    async def _keep_series(self) -> None:
        while True:
            await self._clock.sleep(SERIES_FINISH)
            self.tend_series()

    def tend_series(self) -> None:
        """Write counts that changed and are due, and forget series that have ended."""
        now = self._clock.now()
        for key, series in list(self._series.items()):
            if series.writing or self._waiting(key) is not None:
                continue  # tended once that write has been made (`_finished`)
            ended = now - series.last_observed >= SERIES_FINISH
            due = ended or now - series.written_at >= SERIES_REFRESH
            if ended:
                # Forgotten now, so the next occurrence is a new Event; the last count goes
                # under a key of its own, where that new Event's create cannot replace it.
                del self._series[key]
                if series.count != series.written_count:
                    self._enqueue(_Write((*key, FINAL_WRITE), series=series))
            elif series.count != series.written_count and due:
                self._enqueue(_Write(key, series=series))

    def _dropped(self, reason: str, event: Mapping[str, Any]) -> None:
        if self._metrics is not None:
            self._metrics.event_dropped(reason)
        log.warning("event dropped", reason=reason, regarding=_describe_body(event))


def _count_in(body: dict[str, Any], clock: Clock) -> None:
    """One more occurrence of a queued Event: it is created as a series."""
    series = body.get("series")
    count = int(series["count"]) + 1 if isinstance(series, dict) else 2
    body["series"] = {"count": count, "lastObservedTime": _micro_time(clock.wall())}


def _retry_delay(error: APIError, attempts: int) -> float:
    if error.retry_after is not None:
        return min(error.retry_after, RETRY_CAP * 6)
    return min(RETRY_CAP, RETRY_BASE * 2.0 ** (attempts - 1))


def _micro_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _describe(write: _Write) -> str:
    if write.body is not None:
        return _describe_body(write.body)
    series = write.series
    return f"series of {series.namespace}/{series.name}" if series is not None else "?"


def _describe_body(event: Mapping[str, Any]) -> str:
    regarding = event.get("regarding") or {}
    return f"{event.get('reason')} for {regarding.get('namespace')}/{regarding.get('name')}"
