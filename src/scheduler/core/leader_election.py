"""Lease-based leader election over the cluster port, with client-go's semantics.

Replicas compete for one coordination.k8s.io/v1 Lease. The holder renews it every retry
period; the others take it over once they have seen no change to it for its
leaseDurationSeconds. Expiry is judged by each candidate's own clock (when it last saw the record
change), never by comparing its clock with the holder's renewTime, so clock skew between
replicas cannot hand the lease out early. Writes carry the resourceVersion that was read: of two
candidates updating at once, one gets a 409 and tries again later.

The renew deadline is counted as client-go counts it: once a successful renewal has been
answered the leader waits a retry period, then has the renew deadline to succeed again, or it
stops leading. A slow API server thus costs no leadership time, as it costs kube-scheduler none.

Tenure, for callers that must not act without the lease (Bindings), is counted from the other
end of that renewal: a write the leader made at time t (its clock, taken before sending)
reached the server after t, so no standby can take the lease before t + leaseDuration by the
standby's clock. `tenure_remaining` counts down to t + renewDeadline only, which leaves
leaseDuration - renewDeadline (5 s by default) for a request sent just before the end of tenure
to be processed, and for clock rates to differ. Leadership may outlast the tenure by up to a
retry period and a request's latency; in that time the leader renews but writes nothing fenced.
It never outlasts t + leaseDuration, where a standby may take over (kube-scheduler's may, for
an answer that late): two replicas popping at once would both write pods' conditions.

The /healthz watchdog follows client-go's too: it looks at the Lease record last seen, not at
whether this process still thinks it leads, so a replica that lost the Lease but did not exit
(its shutdown hangs) fails it once that record has gone unrenewed for too long.

A leader that lost the lease (renewals failed, or another holder was seen) does not release
it: requests it sent may still be in flight, so the others wait out the lease duration. Only a
graceful stop (after binding cycles have ended) releases it, clearing the holder so another
replica can take over at once.
"""

from __future__ import annotations

import asyncio
import random
import socket
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from typing import TypeVar

from scheduler.cluster.port import ClusterClient
from scheduler.core.clock_deadline import ClockDeadline
from scheduler.core.lease_record import LeaseRecord
from scheduler.core.lease_record import micro_time
from scheduler.core.lease_record import new_lease
from scheduler.core.lease_record import with_record
from scheduler.framework.clock import Clock
from scheduler.framework.clock import Timer
from scheduler.framework.errors import APIError
from scheduler.framework.errors import NotFoundError
from scheduler.observability import SchedulerMetrics
from scheduler.observability import get_logger
from scheduler.observability import log_v

LEASES = "leases"

_T = TypeVar("_T")

# How long past the lease duration the Lease record last seen may name this replica, unrenewed,
# before /healthz reports it unhealthy: kube-scheduler's leader-election watchdog tolerates
# 20 s. Normally the renew deadline ends leadership long before and the process exits; this
# catches an event loop that has stopped running, or an exit that hangs.
WATCHDOG_GRACE = 20.0

# client-go requires renewDeadline > 1.2 * retryPeriod (its retry jitter factor), and a
# candidate waits up to that much more than a retry period between attempts.
_JITTER_FACTOR = 1.2

# The elector's name, in leader_election_master_status and the health check's message:
# kube-scheduler names its elector so whatever the Lease is called (--leader-elect-resource-name).
ELECTOR_NAME = "kube-scheduler"

# What a released lease says about its duration (client-go writes 1 s).
_RELEASED_LEASE_DURATION = 1

log = get_logger("leaderelection")
# client-go's log lines, and the level of each failed write (None: an error record).
_Failure = tuple[int | None, str]
_ATTEMPTING = "Attempting to acquire leader lease..."
_OPTIMISTIC_FAILED: _Failure = (
    2,
    "Failed to update lease optimistically, falling back to slow path",
)
_UPDATE_FAILED: _Failure = (None, "Failed to update lease")
_CREATE_FAILED: _Failure = (None, "Error initially creating lease lock")


def new_identity() -> str:
    """A holder identity unique to this process: the host name, "_" and a random UUID."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Acquires and keeps one Lease; calls back when leadership starts and stops.

    `try_acquire_or_renew` is one finite step (tests drive it directly); `run` is the thin loop
    around it. Leadership ends when no renewal has succeeded by the renew deadline (see the
    module doc; a Clock timer, so it happens even while a request hangs), when another holder
    is seen, or on `release`.
    """

    def __init__(
        self,
        client: ClusterClient,
        *,
        namespace: str,
        name: str,
        identity: str,
        clock: Clock,
        lease_duration: float = 15,
        renew_deadline: float = 10,
        retry_period: float = 2,
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
        metrics: SchedulerMetrics | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        """`jitter` draws from [0, 1): a candidate waits a retry period plus up to 1.2 of it
        between attempts (client-go's jittered retries), so standbys do not ask in step."""
        _validate(identity, lease_duration, renew_deadline, retry_period)
        self._client = client
        self._namespace = namespace
        self._name = name
        self._identity = identity
        self._clock = clock
        self._lease_duration = lease_duration
        self._renew_deadline = renew_deadline
        self._retry_period = retry_period
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._metrics = metrics
        self._jitter = jitter
        # The last lease object read or written: its resourceVersion guards the next write.
        self._lease: dict[str, Any] | None = None
        self._observed: LeaseRecord | None = None
        self._observed_time = 0.0
        self._leading = False
        self._lost = False
        # `acquire_at_once` has made the first attempt, so `run` waits a period before the next.
        self._attempted = False
        # The last successful renewal: when it was sent (the tenure counts from then) and when
        # its answer came (leadership counts from then).
        self._renew_sent = 0.0
        self._renew_done = 0.0
        self._deadline: Timer | None = None
        if metrics is not None:
            metrics.leader_status(ELECTOR_NAME, False)

    # -- state ---------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self._leading

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def lease_reference(self) -> tuple[str, str, str]:
        """The Lease's namespace, name and UID (empty until it was read or written)."""
        uid = str(((self._lease or {}).get("metadata") or {}).get("uid") or "")
        return self._namespace, self._name, uid

    def tenure_remaining(self, now: float) -> float:
        """Seconds during which this process may still act as the leader (0 if not leading):
        until the renew deadline counted from the start of the last successful renewal."""
        if not self._leading:
            return 0.0
        return max(0.0, self._renew_sent + self._renew_deadline - now)

    def healthy(self, now: float) -> bool:
        """The /healthz watchdog (client-go's `Check`): False once the Lease record last seen
        names this replica and was seen more than the lease duration plus `WATCHDOG_GRACE`
        ago. Whether this process still leads does not enter: one that lost the Lease and
        lingers is what the watchdog is for. A standby, or a replica that released the Lease
        or saw it taken, names no record of its own and stays healthy."""
        observed = self._observed
        if observed is None or observed.holder_identity != self._identity:
            return True
        return now - self._observed_time <= self._lease_duration + WATCHDOG_GRACE

    # -- the loop ------------------------------------------------------------------------------

    async def acquire_at_once(self) -> bool:
        """One attempt to take the lease; True if it is held.

        The daemon makes it before its informers list: a replica that leads before its first
        list is sent need not list again when it starts to schedule. `run` goes on from here.
        Like client-go's first attempt it has no deadline of its own: each of its requests
        ends at the Lease client's timeout, so an API server that answers in a few seconds
        still hands the Lease over before the lists begin."""
        log.info(_ATTEMPTING, lock=self._key)
        self._attempted = True
        return await self.try_acquire_or_renew()

    async def run(self) -> None:
        """Acquire the lease (retrying every retry period), then renew it until leadership is
        lost or the task is cancelled. Either way the lease is released on the way out."""
        if not self._attempted:
            log.info(_ATTEMPTING, lock=self._key)
        try:
            if self._attempted and not self._leading:
                await self._clock.sleep(self._retry_wait())
            while not (self._leading or await self.try_acquire_or_renew()):
                log_v(log, 4, "Failed to acquire lease", lock=self._key)
                await self._clock.sleep(self._retry_wait())
            while self._leading:
                await self._clock.sleep(self._retry_period)
                # Give up on an attempt when the renew deadline passes (the deadline timer ends
                # leadership at that same moment).
                remaining = self._leadership_deadline() - self._clock.now()
                if not self._leading:
                    break
                if await self._within(self.try_acquire_or_renew(), remaining):
                    log_v(log, 5, "Successfully renewed lease", lock=self._key)
        finally:
            await self.release()

    async def try_acquire_or_renew(self) -> bool:
        """One attempt to take or renew the lease; True if we hold it afterwards."""
        now = self._clock.now()
        stamp = micro_time(self._clock.wall())
        # Whole seconds, cut as client-go cuts them.
        desired = LeaseRecord(self._identity, int(self._lease_duration), stamp, stamp, 0)
        observed = self._observed
        if self._lease is not None and observed is not None and self._holds(observed, now):
            # Fast path: a leader assumes nobody else wrote since its own last write.
            kept = replace(
                desired,
                acquire_time=observed.acquire_time,
                lease_transitions=observed.lease_transitions,
            )
            if await self._write(with_record(self._lease, kept), now, _OPTIMISTIC_FAILED):
                return True
        try:
            current = await self._client.get(LEASES, self._namespace, self._name)
        except NotFoundError:
            return await self._create(desired, now)
        except APIError as err:
            log.error("Error retrieving lease lock", lock=self._key, err=str(err))
            return False
        # Observed when the answer arrived, not when the read was sent: a renewal the holder
        # finished while the read was in flight must count from after it (as client-go stamps
        # observedTime), or a slow read would let the Lease be taken early.
        record = self._observe(current, self._clock.now())
        if record.holder_identity not in ("", self._identity) and self._valid(now):
            log_v(
                log,
                4,
                "Lease is held by and has not yet expired",
                lock=self._key,
                holder=record.holder_identity,
            )
            if self._leading:
                self._lose(f"lease taken by {record.holder_identity}")
            return False
        if record.holder_identity == self._identity:
            desired = replace(
                desired,
                acquire_time=record.acquire_time,
                lease_transitions=record.lease_transitions,
            )
            if self._metrics is not None:
                self._metrics.leader_slowpath(ELECTOR_NAME)
        else:
            desired = replace(desired, lease_transitions=record.lease_transitions + 1)
        return await self._write(with_record(current, desired), now, _UPDATE_FAILED)

    async def release(self) -> None:
        """Give the lease up (holder cleared, 1 s duration) so another replica can take it at
        once. A no-op unless the last record we saw names us, or once leadership was lost (see
        the module doc); a failed write is only logged."""
        self._cancel_deadline()
        observed = self._observed
        try:
            if self._lease is None or observed is None or self._lost:
                return
            if observed.holder_identity != self._identity:
                return
            try:
                stored = await self._within(self._release_fresh(), self._renew_deadline)
            except APIError as err:
                log.error("Failed to release lease", lock=self._key, err=str(err))
                return
            if stored is None:
                log.error("Failed to release lease", lock=self._key, err="timed out")
                return
            if not stored:
                return
            self._remember(stored, self._clock.now())
            log.info("Released lease", lock=self._key)
        finally:
            if self._leading:
                self._stop_leading()

    # -- steps ---------------------------------------------------------------------------------

    async def _release_fresh(self) -> dict[str, Any]:
        """Release the lease as the server holds it now (read first, as client-go's release
        does): a renewal whose answer was lost, cancelled at shutdown, moved its version on.
        Nothing ({}) when it no longer names us."""
        current = await self._client.get(LEASES, self._namespace, self._name)
        record = LeaseRecord.from_lease(current)
        if record.holder_identity != self._identity:
            return {}
        stamp = micro_time(self._clock.wall())
        released = LeaseRecord("", _RELEASED_LEASE_DURATION, stamp, stamp, record.lease_transitions)
        return await self._client.update(LEASES, with_record(current, released))

    async def _create(self, desired: LeaseRecord, now: float) -> bool:
        lease = new_lease(self._namespace, self._name, desired)
        # A 409 here means another candidate created it first; we read it next time.
        created = self._client.create(LEASES, lease)
        return await self._store(created, now, _CREATE_FAILED)

    async def _write(self, lease: dict[str, Any], now: float, failed: _Failure) -> bool:
        return await self._store(self._client.update(LEASES, lease), now, failed)

    async def _store(self, write: Awaitable[dict[str, Any]], now: float, failed: _Failure) -> bool:
        """Await a write of the lease sent at `now`: on success the stored lease is the one
        held from now on; a refused write is logged as `failed` says and changes nothing."""
        try:
            stored = await write
        except APIError as err:
            level, message = failed
            if level is None:
                log.error(message, lock=self._key, err=str(err))
            else:
                log_v(log, level, message, lock=self._key, err=str(err))
            return False
        self._renewed(stored, now)
        return True

    def _observe(self, lease: dict[str, Any], now: float) -> LeaseRecord:
        """Note a lease read from the server; the observation time moves only when its record
        changed, which is what makes a silent holder's lease expire."""
        record = LeaseRecord.from_lease(lease)
        self._lease = lease
        if record != self._observed:
            self._observed = record
            self._observed_time = now
        return record

    def _remember(self, lease: dict[str, Any], now: float) -> None:
        """Note a lease we wrote ourselves."""
        self._lease = lease
        self._observed = LeaseRecord.from_lease(lease)
        self._observed_time = now

    def _renewed(self, lease: dict[str, Any], sent: float) -> None:
        # Observed when the answer came, as client-go stamps its own writes: that time drives
        # the leadership deadline and the watchdog; the tenure keeps the time it was sent.
        done = self._clock.now()
        self._remember(lease, done)
        self._renew_sent = sent
        self._renew_done = done
        self._cancel_deadline()
        delay = self._leadership_deadline() - self._clock.now()
        self._deadline = self._clock.call_later(max(0.0, delay), self._deadline_passed)
        if not self._leading:
            self._leading = True
            log.info("Successfully acquired lease", lock=self._key, identity=self._identity)
            if self._metrics is not None:
                self._metrics.leader_status(ELECTOR_NAME, True)
            self._on_started()

    def _retry_wait(self) -> float:
        """A candidate's wait before its next attempt (client-go's JitterUntil)."""
        return self._retry_period * (1 + _JITTER_FACTOR * self._jitter())

    def _leadership_deadline(self) -> float:
        """When leadership ends without another successful renewal: a retry period after the
        last one was answered, plus the renew deadline (client-go's renew loop, whose wait
        begins when the previous renewal returned), but no later than a standby may take the
        Lease over (a lease duration after that renewal was sent)."""
        answered = self._renew_done + self._retry_period + self._renew_deadline
        return min(answered, self._renew_sent + self._lease_duration)

    def _deadline_passed(self) -> None:
        self._deadline = None
        if self._leading:
            self._lose(f"not renewed within {self._renew_deadline:g}s")

    def _lose(self, reason: str) -> None:
        log.info("Failed to renew lease", lock=self._key, err=reason)
        self._lost = True
        self._cancel_deadline()
        self._stop_leading()

    def _stop_leading(self) -> None:
        self._leading = False
        if self._metrics is not None:
            self._metrics.leader_status(ELECTOR_NAME, False)
        self._on_stopped()

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    async def _within(self, step: Awaitable[_T], seconds: float) -> _T | None:
        """Await `step` for at most `seconds` of Clock time; None if it ran out. A hung request
        must not keep a former leader's loop, or its shutdown, waiting."""
        task = asyncio.current_task()
        # Cancellations of the caller that were already under way (a shutdown releasing the
        # lease) are not ours to report again.
        cancelling = task.cancelling() if task is not None else 0
        work = asyncio.ensure_future(step)
        with ClockDeadline(self._clock, seconds, work) as deadline:
            try:
                return await work
            except asyncio.CancelledError:
                if deadline.passed and (task is None or task.cancelling() == cancelling):
                    return None
                raise

    def _holds(self, record: LeaseRecord, now: float) -> bool:
        return record.holder_identity == self._identity and self._valid(now)

    def _valid(self, now: float) -> bool:
        """Whether the observed record is still in force by our own clock."""
        if self._observed is None:
            return False
        return self._observed_time + self._observed.lease_duration_seconds > now

    @property
    def _key(self) -> str:
        return f"{self._namespace}/{self._name}"


def _validate(
    identity: str, lease_duration: float, renew_deadline: float, retry_period: float
) -> None:
    if not identity:
        raise ValueError("leader election identity must not be empty")
    if min(lease_duration, renew_deadline, retry_period) <= 0:
        raise ValueError("leaseDuration, renewDeadline and retryPeriod must be greater than zero")
    if lease_duration <= renew_deadline:
        raise ValueError("leaseDuration must be greater than renewDeadline")
    if renew_deadline <= _JITTER_FACTOR * retry_period:
        raise ValueError(f"renewDeadline must be greater than retryPeriod*{_JITTER_FACTOR:g}")
