"""Lease-based leader election against the in-memory cluster, time moved by a FakeClock."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import pytest
from structlog.testing import capture_logs

from scheduler.cluster.sim import SimCluster
from scheduler.core.leader_election import WATCHDOG_GRACE
from scheduler.core.leader_election import LeaderElector
from scheduler.core.leader_election import new_identity
from scheduler.core.lease_record import micro_time
from scheduler.framework.errors import APIError
from scheduler.observability import SchedulerMetrics
from scheduler.observability import set_verbosity
from scheduler.testing import FakeClock

NAMESPACE, NAME = "kube-system", "kube-scheduler"


class Candidate:
    """One replica: its elector and the leadership callbacks it saw, in order."""

    def __init__(
        self,
        sim: SimCluster,
        clock: FakeClock,
        identity: str,
        metrics: SchedulerMetrics,
        jitter: float = 0.0,
    ) -> None:
        """`jitter`: the draw that stretches each wait between attempts (none by default, so
        a candidate's attempts come exactly a retry period apart)."""
        self.calls: list[str] = []
        self.metrics = metrics
        self.elector = LeaderElector(
            sim,
            namespace=NAMESPACE,
            name=NAME,
            identity=identity,
            clock=clock,
            on_started_leading=lambda: self.calls.append("started"),
            on_stopped_leading=lambda: self.calls.append("stopped"),
            metrics=metrics,
            jitter=lambda: jitter,
        )

    @property
    def status_metric(self) -> float | None:
        return self.metrics.registry.get_sample_value(
            "leader_election_master_status", {"name": NAME}
        )


class SleepWatchingClock(FakeClock):
    """A FakeClock that counts the sleeps begun on it, so a test knows when a loop has come
    round to its next wait."""

    def __init__(self) -> None:
        super().__init__()
        self.sleeps = 0

    async def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        await super().sleep(seconds)


@pytest.fixture
def clock() -> SleepWatchingClock:
    return SleepWatchingClock()


@pytest.fixture
def sim(clock: FakeClock) -> SimCluster:
    return SimCluster(clock)


@pytest.fixture
def replica(sim: SimCluster, clock: FakeClock) -> Callable[[str], Candidate]:
    return lambda identity: Candidate(sim, clock, identity, SchedulerMetrics())


def lease_spec(sim: SimCluster) -> dict[str, Any]:
    [lease] = [obj for obj in sim.objects("leases") if obj["metadata"]["name"] == NAME]
    return dict(lease["spec"])


def server_error() -> APIError:
    return APIError(500, "etcdserver: request timed out")


def fail_renewals(sim: SimCluster, times: int) -> None:
    """Make the next `times` renewals fail whichever path (optimistic update, or get) they take."""
    for _ in range(times):
        sim.fail_next("update", "leases", server_error())
        sim.fail_next("get", "leases", server_error())


async def test_a_single_candidate_creates_the_lease_and_leads(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    assert a.status_metric == 0
    assert await a.elector.try_acquire_or_renew()
    stamp = micro_time(clock.wall())
    assert lease_spec(sim) == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": stamp,
        "renewTime": stamp,
        "leaseTransitions": 0,
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp)
    assert a.elector.is_leader
    assert a.calls == ["started"]
    assert a.status_metric == 1


async def test_renewals_move_renew_time_only(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    assert await a.elector.try_acquire_or_renew()
    acquired = lease_spec(sim)["acquireTime"]
    for _ in range(3):
        clock.advance(2)
        assert await a.elector.try_acquire_or_renew()
    spec = lease_spec(sim)
    assert spec["acquireTime"] == acquired
    assert spec["renewTime"] == micro_time(clock.wall()) != acquired
    assert spec["leaseTransitions"] == 0
    assert a.calls == ["started"]


async def test_a_second_candidate_waits_while_the_holder_renews(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a, b = replica("a"), replica("b")
    assert await a.elector.try_acquire_or_renew()
    for _ in range(20):  # 40 s, well past one lease duration
        assert not await b.elector.try_acquire_or_renew()
        clock.advance(2)
        assert await a.elector.try_acquire_or_renew()
    assert lease_spec(sim)["holderIdentity"] == "a"
    assert not b.elector.is_leader
    assert b.calls == []
    assert b.status_metric == 0


@pytest.mark.parametrize(
    ("first_look", "too_early", "in_time"),
    [
        # Expiry counts from when b first saw the record, by b's own clock.
        pytest.param(0, 14.9, 15.0, id="seen-at-acquire"),
        pytest.param(5, 19.9, 20.0, id="seen-later-waits-longer"),
    ],
)
async def test_takeover_after_the_holder_is_silent_for_the_lease_duration(
    sim: SimCluster,
    clock: FakeClock,
    replica: Callable[[str], Candidate],
    first_look: float,
    too_early: float,
    in_time: float,
) -> None:
    a, b = replica("a"), replica("b")
    start = clock.now()
    assert await a.elector.try_acquire_or_renew()
    clock.advance(first_look)
    assert not await b.elector.try_acquire_or_renew()
    clock.advance(too_early - (clock.now() - start))
    assert not await b.elector.try_acquire_or_renew()
    clock.advance(in_time - (clock.now() - start))
    assert await b.elector.try_acquire_or_renew()
    spec = lease_spec(sim)
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1
    assert spec["acquireTime"] == micro_time(clock.wall())
    assert b.calls == ["started"]


async def test_holder_stops_leading_when_renewals_fail_past_the_renew_deadline(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    assert await a.elector.try_acquire_or_renew()
    fail_renewals(sim, 10)
    # As client-go counts it: a retry period after the last renewal, the next round of attempts
    # begins, and it has the renew deadline (10 s) to succeed.
    for _ in range(5):  # failures at 2, 4, 6, 8, 10 s: still within 2 + 10 s
        clock.advance(2)
        assert not await a.elector.try_acquire_or_renew()
        assert a.elector.is_leader
    clock.advance(1.99)
    assert a.elector.is_leader
    assert a.calls == ["started"]
    clock.advance(0.01)  # 12 s since the last renewal: lost at once, without another attempt
    assert not a.elector.is_leader
    assert a.calls == ["started", "stopped"]
    assert a.status_metric == 0


async def test_tenure_ends_at_the_renew_deadline_before_leadership_does(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a, b = replica("a"), replica("b")
    assert a.elector.tenure_remaining(clock.now()) == 0  # not leading yet
    assert await a.elector.try_acquire_or_renew()
    assert not await b.elector.try_acquire_or_renew()
    assert a.elector.tenure_remaining(clock.now()) == 10
    clock.advance(6)  # a renews no more (its process hangs, say)
    assert a.elector.tenure_remaining(clock.now()) == 4
    clock.advance(4)
    # Still leading (until 12 s), but no longer allowed to act as the leader...
    assert a.elector.is_leader
    assert a.elector.tenure_remaining(clock.now()) == 0
    # ...and the standby, which last saw the record change at 0 s, may take over only at 15 s:
    # five seconds after the tenure ended, three after leadership did.
    clock.advance(4.99)
    assert not await b.elector.try_acquire_or_renew()
    clock.advance(0.01)
    assert await b.elector.try_acquire_or_renew()
    assert not a.elector.is_leader


async def test_a_renewal_restores_the_tenure(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    assert await a.elector.try_acquire_or_renew()
    clock.advance(2)
    assert await a.elector.try_acquire_or_renew()
    assert a.elector.tenure_remaining(clock.now()) == 10


async def test_a_successful_renewal_pushes_the_deadline_back(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    assert await a.elector.try_acquire_or_renew()
    fail_renewals(sim, 4)
    for _ in range(4):
        clock.advance(2)
        assert not await a.elector.try_acquire_or_renew()
    clock.advance(1)
    assert await a.elector.try_acquire_or_renew()  # at 9 s
    clock.advance(11.9)
    assert a.elector.is_leader
    clock.advance(0.1)
    assert a.calls == ["started", "stopped"]


async def test_leader_stops_at_once_when_it_sees_another_holder(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    assert await a.elector.try_acquire_or_renew()
    lease = await sim.get("leases", NAMESPACE, NAME)
    lease["spec"]["holderIdentity"] = "intruder"
    await sim.update("leases", lease)
    clock.advance(2)
    # The optimistic write conflicts, the re-read shows the new holder.
    assert not await a.elector.try_acquire_or_renew()
    assert not a.elector.is_leader
    assert a.calls == ["started", "stopped"]
    assert lease_spec(sim)["holderIdentity"] == "intruder"


@pytest.mark.parametrize("verb", ["create", "update"])
async def test_of_two_concurrent_writers_the_later_gets_a_conflict_and_stays_follower(
    sim: SimCluster,
    clock: FakeClock,
    replica: Callable[[str], Candidate],
    monkeypatch: pytest.MonkeyPatch,
    verb: str,
) -> None:
    a, b = replica("a"), replica("b")
    if verb == "update":  # a departed holder's lease, expired for both candidates
        await sim.create(
            "leases",
            {
                "metadata": {"namespace": NAMESPACE, "name": NAME},
                "spec": {"holderIdentity": "gone", "leaseDurationSeconds": 15},
            },
        )
        assert not await a.elector.try_acquire_or_renew()
        assert not await b.elector.try_acquire_or_renew()
        clock.advance(15)
    original = getattr(sim, verb)

    async def b_writes_between_read_and_write(resource: str, obj: Mapping[str, Any]) -> Any:
        monkeypatch.setattr(sim, verb, original)
        assert await b.elector.try_acquire_or_renew()
        return await original(resource, obj)

    monkeypatch.setattr(sim, verb, b_writes_between_read_and_write)
    assert not await a.elector.try_acquire_or_renew()
    assert (a.elector.is_leader, b.elector.is_leader) == (False, True)
    assert lease_spec(sim)["holderIdentity"] == "b"
    # a keeps following on later attempts, seeing b's fresh record.
    clock.advance(2)
    assert not await a.elector.try_acquire_or_renew()
    assert a.calls == []


async def test_release_lets_another_candidate_take_over_at_once(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a, b = replica("a"), replica("b")
    assert await a.elector.try_acquire_or_renew()
    assert not await b.elector.try_acquire_or_renew()
    await a.elector.release()
    released = lease_spec(sim)
    assert released["holderIdentity"] == ""
    assert released["leaseDurationSeconds"] == 1
    assert a.calls == ["started", "stopped"]
    assert a.status_metric == 0
    assert await b.elector.try_acquire_or_renew()  # no time has passed
    assert lease_spec(sim)["holderIdentity"] == "b"


async def test_release_reads_the_lease_first_so_a_renewal_whose_answer_was_lost_does_not_block_it(
    sim: SimCluster, replica: Callable[[str], Candidate]
) -> None:
    """A renewal cancelled at shutdown after the server took it leaves the leader holding an
    older version: the release still goes through, as client-go's (which reads first) does."""
    a, b = replica("a"), replica("b")
    assert await a.elector.try_acquire_or_renew()
    [lease] = [dict(o) for o in sim.objects("leases")]
    # The lost renewal: the same holder, a later renewTime, a newer version.
    lease["spec"] = {**lease["spec"], "renewTime": "2030-01-01T00:00:00.000000Z"}
    await sim.update("leases", lease)
    await a.elector.release()
    assert lease_spec(sim)["holderIdentity"] == ""
    assert await b.elector.try_acquire_or_renew()


async def test_release_leaves_alone_a_lease_another_replica_took_meanwhile(
    sim: SimCluster, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    assert await a.elector.try_acquire_or_renew()
    [lease] = [dict(o) for o in sim.objects("leases")]
    lease["spec"] = {**lease["spec"], "holderIdentity": "c"}
    await sim.update("leases", lease)
    await a.elector.release()
    assert lease_spec(sim)["holderIdentity"] == "c"


async def test_release_is_a_no_op_for_a_follower(
    sim: SimCluster, replica: Callable[[str], Candidate]
) -> None:
    a, b = replica("a"), replica("b")
    assert await a.elector.try_acquire_or_renew()
    assert not await b.elector.try_acquire_or_renew()
    await b.elector.release()
    assert lease_spec(sim)["holderIdentity"] == "a"
    assert b.calls == []


async def test_lease_transitions_count_changes_of_holder(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a, b = replica("a"), replica("b")
    seen: list[tuple[str, int]] = []
    for elector in (a.elector, b.elector, a.elector):
        clock.advance(2)
        assert await elector.try_acquire_or_renew()
        clock.advance(2)
        assert await elector.try_acquire_or_renew()  # a renewal counts no transition
        spec = lease_spec(sim)
        seen.append((spec["holderIdentity"], spec["leaseTransitions"]))
        await elector.release()
    assert seen == [("a", 0), ("b", 1), ("a", 2)]
    assert lease_spec(sim)["leaseTransitions"] == 2  # a release keeps the count


async def test_healthy_is_false_only_for_a_leader_overdue_past_the_grace(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    assert a.elector.healthy(clock.now() + 1000)  # a follower is always healthy
    assert await a.elector.try_acquire_or_renew()
    renewed = clock.now()
    # Read without advancing the clock: a stalled loop never fires the renew deadline.
    assert a.elector.healthy(renewed + 15 + WATCHDOG_GRACE)
    assert not a.elector.healthy(renewed + 15 + WATCHDOG_GRACE + 0.1)
    await a.elector.release()
    assert a.elector.healthy(renewed + 1000)  # the record it saw last names nobody


async def test_the_watchdog_fails_a_replica_that_lost_the_lease_and_lingers(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    """As client-go's: what counts is the record last seen, which still names the replica
    whose renewals failed; a standby, which never led, stays healthy."""
    a, b = replica("a"), replica("b")
    assert await a.elector.try_acquire_or_renew()
    seen = clock.now()
    assert not await b.elector.try_acquire_or_renew()
    fail_renewals(sim, 5)
    for _ in range(5):
        clock.advance(2)
        assert not await a.elector.try_acquire_or_renew()
    clock.advance(2)
    assert a.calls == ["started", "stopped"]  # lost; its process should exit now, but hangs
    assert a.elector.healthy(seen + 15 + WATCHDOG_GRACE)
    assert not a.elector.healthy(seen + 15 + WATCHDOG_GRACE + 0.5)
    assert b.elector.healthy(seen + 1000)


@pytest.mark.parametrize(
    ("lease_duration", "renew_deadline", "retry_period"),
    [
        pytest.param(10, 10, 2, id="lease-not-longer-than-deadline"),
        pytest.param(15, 2.4, 2, id="deadline-within-jittered-retry"),
        pytest.param(15, 10, 0, id="zero-retry"),
    ],
)
def test_inconsistent_timings_are_rejected(
    sim: SimCluster,
    clock: FakeClock,
    lease_duration: float,
    renew_deadline: float,
    retry_period: float,
) -> None:
    with pytest.raises(ValueError, match="must be greater"):
        LeaderElector(
            sim,
            namespace=NAMESPACE,
            name=NAME,
            identity="a",
            clock=clock,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            on_started_leading=lambda: None,
            on_stopped_leading=lambda: None,
        )


def test_identities_are_host_name_and_a_unique_suffix() -> None:
    first, second = new_identity(), new_identity()
    assert first != second
    host, _, suffix = first.rpartition("_")
    assert host and host == second.rpartition("_")[0]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", suffix)


# -- the run loop ---------------------------------------------------------------------------


async def settle(condition: Callable[[], bool], *, steps: int = 100) -> None:
    """Let the event loop run ready tasks until `condition` holds (no time passes)."""
    for _ in range(steps):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not reached")


async def until_sleeping(clock: SleepWatchingClock, sleeps: int) -> None:
    """Wait until the run loop has begun its `sleeps`-th wait."""
    await settle(lambda: clock.sleeps == sleeps)


async def test_run_waits_for_the_lease_renews_it_and_releases_it_when_cancelled(
    sim: SimCluster, clock: SleepWatchingClock, replica: Callable[[str], Candidate]
) -> None:
    a, b = replica("a"), replica("b")
    assert await a.elector.try_acquire_or_renew()
    running = asyncio.create_task(b.elector.run())
    await until_sleeping(clock, 1)  # b tried and failed
    assert not b.elector.is_leader
    await a.elector.release()
    clock.advance(2)
    await until_sleeping(clock, 2)
    assert b.elector.is_leader
    last_renew = lease_spec(sim)["renewTime"]
    clock.advance(2)
    await settle(lambda: lease_spec(sim)["renewTime"] != last_renew)
    assert lease_spec(sim)["renewTime"] == micro_time(clock.wall())
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert lease_spec(sim)["holderIdentity"] == ""
    assert b.calls == ["started", "stopped"]


async def test_run_returns_when_leadership_is_lost(
    sim: SimCluster, clock: SleepWatchingClock, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    running = asyncio.create_task(a.elector.run())
    await until_sleeping(clock, 1)
    fail_renewals(sim, 5)
    for round_ in range(5):  # failures at 2, 4, 6, 8 and 10 s
        clock.advance(2)
        await until_sleeping(clock, round_ + 2)
    assert a.calls == ["started"]
    clock.advance(2)
    await settle(running.done)
    await running
    assert a.calls == ["started", "stopped"]
    # A lost lease is not released: requests sent while leading may still be in flight, so the
    # others wait out the lease duration.
    assert lease_spec(sim)["holderIdentity"] == "a"


async def test_a_hung_renewal_does_not_keep_a_lost_leader_running(
    sim: SimCluster,
    clock: SleepWatchingClock,
    replica: Callable[[str], Candidate],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a = replica("a")
    running = asyncio.create_task(a.elector.run())
    await until_sleeping(clock, 1)
    never = asyncio.Event()

    async def hang(resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        await never.wait()
        raise AssertionError("unreachable")

    monkeypatch.setattr(sim, "update", hang)
    clock.advance(2)  # the renewal starts and hangs
    await settle(lambda: clock.pending_timers >= 2)  # the deadline and the attempt's limit
    clock.advance(10)
    assert a.calls == ["started", "stopped"]
    await settle(running.done)
    await running
    assert lease_spec(sim)["holderIdentity"] == "a"  # lost, so never released


class SlowLeaseReads(SimCluster):
    """The in-memory cluster, but a Lease read takes `delay` seconds, during which `meanwhile`
    (another replica's write, say) runs and completes."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self._read_clock = clock
        self.delay = 0.0
        self.meanwhile: Callable[[], Any] | None = None

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        if resource == "leases" and self.meanwhile is not None:
            meanwhile, self.meanwhile = self.meanwhile, None
            await meanwhile()
            self._read_clock.advance(self.delay)
        return await super().get(resource, namespace, name)


async def test_a_renewal_seen_by_a_slow_read_counts_from_the_answer(clock: FakeClock) -> None:
    sim = SlowLeaseReads(clock)
    a, b = (
        Candidate(sim, clock, "a", SchedulerMetrics()),
        Candidate(sim, clock, "b", SchedulerMetrics()),
    )
    assert await a.elector.try_acquire_or_renew()
    clock.advance(1.0)
    assert not await b.elector.try_acquire_or_renew()
    # b's next read is on the wire for 2 s; a renews meanwhile, and then falls silent.
    sim.delay, sim.meanwhile = 2.0, a.elector.try_acquire_or_renew
    assert not await b.elector.try_acquire_or_renew()
    answered = clock.now()
    # The renewal b saw holds for a lease duration from when b saw it, not from when b asked.
    clock.advance(15.0 - 1.0)
    assert not await b.elector.try_acquire_or_renew()
    assert lease_spec(sim)["holderIdentity"] == "a"
    clock.advance(answered + 15.0 - clock.now())
    assert await b.elector.try_acquire_or_renew()
    assert lease_spec(sim)["holderIdentity"] == "b"


async def test_a_candidates_attempts_are_jittered_as_client_go_jitters_them(
    sim: SimCluster, clock: SleepWatchingClock
) -> None:
    a = Candidate(sim, clock, "a", SchedulerMetrics())
    b = Candidate(sim, clock, "b", SchedulerMetrics(), jitter=0.5)
    assert await a.elector.try_acquire_or_renew()
    running = asyncio.create_task(b.elector.run())
    await until_sleeping(clock, 1)  # b tried and failed; it waits 2 s * (1 + 1.2 * 0.5)
    await a.elector.release()
    clock.advance(3.19)
    for _ in range(20):  # turns of the loop: time enough for a wait that had ended
        await asyncio.sleep(0)
    assert clock.sleeps == 1 and not b.elector.is_leader
    clock.advance(0.01)
    await until_sleeping(clock, 2)
    assert b.elector.is_leader
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running


async def test_the_status_metric_is_named_after_the_elector_whatever_the_lease_is_called(
    sim: SimCluster, clock: FakeClock
) -> None:
    metrics = SchedulerMetrics()
    elector = LeaderElector(
        sim,
        namespace=NAMESPACE,
        name="my-scheduler",
        identity="a",
        clock=clock,
        on_started_leading=lambda: None,
        on_stopped_leading=lambda: None,
        metrics=metrics,
    )
    assert await elector.try_acquire_or_renew()
    sample = metrics.registry.get_sample_value
    assert sample("leader_election_master_status", {"name": "kube-scheduler"}) == 1
    assert sample("leader_election_master_status", {"name": "my-scheduler"}) is None


async def test_a_renewal_whose_optimistic_write_is_refused_counts_a_slow_path(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    a = replica("a")
    assert await a.elector.try_acquire_or_renew()
    # Someone else touches the Lease (a label, say): the leader's next write is a conflict.
    [lease] = [dict(o) for o in sim.objects("leases")]
    lease["metadata"] = {**lease["metadata"], "labels": {"touched": "yes"}}
    await sim.update("leases", lease)
    slowpath = "leader_election_slowpath_total"
    assert a.metrics.registry.get_sample_value(slowpath, {"name": NAME}) is None
    clock.advance(2)
    assert await a.elector.try_acquire_or_renew()
    assert a.metrics.registry.get_sample_value(slowpath, {"name": NAME}) == 1
    assert a.elector.is_leader


async def test_client_gos_log_lines_at_its_levels(
    sim: SimCluster, clock: FakeClock, replica: Callable[[str], Candidate]
) -> None:
    """Greps and alerts written for kube-scheduler's logs find the same lines here."""
    a = replica("a")
    set_verbosity(2)
    try:
        with capture_logs() as logs:
            assert await a.elector.try_acquire_or_renew()
            [lease] = [dict(o) for o in sim.objects("leases")]
            lease["metadata"] = {**lease["metadata"], "labels": {"touched": "yes"}}
            await sim.update("leases", lease)
            clock.advance(2)
            assert await a.elector.try_acquire_or_renew()
            fail_renewals(sim, 10)
            clock.advance(12)
    finally:
        set_verbosity(0)
    lines = [(entry["event"], entry.get("lock")) for entry in logs]
    lock = f"{NAMESPACE}/{NAME}"
    assert lines == [
        ("Successfully acquired lease", lock),
        ("Failed to update lease optimistically, falling back to slow path", lock),
        ("Failed to renew lease", lock),
    ]
    assert logs[-1]["err"] == "not renewed within 10s"


class SlowLeaseAnswers(SimCluster):
    """The in-memory cluster, but the answer to a Lease write comes `latency` seconds of
    clock time after the server stored it (a loaded API server)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self._answer_clock = clock
        self.latency = 0.0
        self.answering = 0

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        stored = await super().create(resource, obj)
        await self._answer(resource)
        return stored

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        stored = await super().update(resource, obj)
        await self._answer(resource)
        return stored

    async def _answer(self, resource: str) -> None:
        if resource != "leases" or not self.latency:
            return
        self.answering += 1
        try:
            await self._answer_clock.sleep(self.latency)
        finally:
            self.answering -= 1


async def leader_renewed_slowly(clock: FakeClock, latency: float) -> tuple[Candidate, float]:
    """A leader whose renewal, sent 2 s after it took the Lease, is answered `latency` seconds
    later; with the time the renewal was sent."""
    sim = SlowLeaseAnswers(clock)
    a = Candidate(sim, clock, "a", SchedulerMetrics())
    assert await a.elector.try_acquire_or_renew()
    clock.advance(2)
    sent = clock.now()
    sim.latency = latency
    renewal = asyncio.create_task(a.elector.try_acquire_or_renew())
    await settle(lambda: sim.answering == 1)
    clock.advance(latency)
    assert await renewal
    return a, sent


async def test_leadership_counts_from_a_renewals_answer_and_the_tenure_from_its_sending(
    clock: FakeClock,
) -> None:
    a, sent = await leader_renewed_slowly(clock, 3.0)
    answered = clock.now()
    # No Binding may start later than the renew deadline after the renewal was sent (a
    # standby may count the lease duration from when the server took it)...
    assert a.elector.tenure_remaining(answered) == sent + 10 - answered
    # ...but leadership lasts, as client-go's does, a retry period and the renew deadline from
    # when the answer came.
    clock.advance(answered + 11.5 - clock.now())
    assert a.elector.is_leader
    assert a.elector.tenure_remaining(clock.now()) == 0
    clock.advance(0.5)
    assert not a.elector.is_leader
    assert a.calls == ["started", "stopped"]


async def test_leadership_never_outlasts_the_moment_a_standby_may_take_over(
    clock: FakeClock,
) -> None:
    # Answered past leaseDuration - renewDeadline - retryPeriod (3 s) after it was sent.
    a, sent = await leader_renewed_slowly(clock, 5.0)
    # client-go's count would run to the answer + 12 s; a standby may take over at sent + 15.
    clock.advance(sent + 14.9 - clock.now())
    assert a.elector.is_leader
    clock.advance(0.1)
    assert not a.elector.is_leader


async def test_the_first_attempt_waits_for_an_answer_slower_than_a_retry_period(
    clock: FakeClock,
) -> None:
    """Only the Lease client's timeout bounds it, as it bounds client-go's first attempt: a
    replica facing an API server that answers in a few seconds still takes the Lease before
    its informers list."""
    sim = SlowLeaseAnswers(clock)
    sim.latency = 3.0
    a = Candidate(sim, clock, "a", SchedulerMetrics())
    first = asyncio.create_task(a.elector.acquire_at_once())
    await settle(lambda: sim.answering == 1)
    clock.advance(3)
    assert await first
    assert a.elector.is_leader
    assert a.calls == ["started"]
