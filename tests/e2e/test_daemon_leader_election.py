"""Two daemon replicas sharing a Lease: one schedules, the other takes over when it goes."""

from __future__ import annotations

import signal
import socket
import time
from typing import Any

import pytest

from tests.e2e.api_client import ApiClient
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import LeaderElection
from tests.e2e.daemon import SchedulerDaemon
from tests.e2e.daemon import poll_until
from tests.e2e.lease_history import LeaseHistory
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

ACQUIRED = "Successfully acquired lease"
BOUND = "Successfully bound pod to node"
# Upper bounds for waiting, not synchronisation delays.
ELECTION_TIMEOUT_S = 30.0
BIND_TIMEOUT_S = 90.0
EVENT_TIMEOUT_S = 30.0
# Beyond leaseDuration + retryPeriod, what a takeover may take on a loaded machine: the
# standby's poll falling just after expiry, and the requests themselves.
TAKEOVER_SLACK_S = 2.5
PROMPT_EXIT_S = 5.0


def _identity(daemon: SchedulerDaemon) -> str | None:
    """The holder identity a daemon logged when it acquired the Lease, if it did."""
    acquired = daemon.records(ACQUIRED)
    return str(acquired[-1]["identity"]) if acquired else None


def _reporting_instance(scheduler: str) -> str:
    # Events name the replica by its host name, as upstream's do; the replicas of these tests
    # share one host, so which replica bound a pod is read from the replica's own log.
    return f"{scheduler}-{socket.gethostname()}"


def _bound_by(daemon: SchedulerDaemon) -> set[str]:
    """The pods a daemon logged binding (its log outlives it, even after SIGKILL)."""
    return {r["pod"].split("/", 1)[1] for r in daemon.records(BOUND)}


def _leader_of(*replicas: SchedulerDaemon) -> tuple[SchedulerDaemon, SchedulerDaemon, str]:
    """(leader, standby, leader identity) once exactly one replica has acquired the Lease."""

    def one_leads() -> list[SchedulerDaemon] | None:
        leading = [r for r in replicas if _identity(r)]
        return leading or None

    [leader] = poll_until(one_leads, "a replica acquiring the lease", timeout_s=ELECTION_TIMEOUT_S)
    [standby] = [r for r in replicas if r is not leader]
    identity = _identity(leader)
    assert identity is not None
    return leader, standby, identity


def _scheduled_by_instance(events: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    return {pod: evs[0]["reportingInstance"] for pod, evs in events.items()}


def test_only_the_leader_binds_and_the_standby_takes_over_after_sigkill(
    admin: ApiClient, daemons: DaemonLauncher, workload: Workload, namespace: str
) -> None:
    ours = unique("sched")
    election = LeaderElection(namespace, unique("lease"))
    lease_s, retry_s = 4.0, 1.0
    workload.create_nodes(4)
    with LeaseHistory(admin, namespace, election.name) as history:
        first = daemons.start(ours, label="a", leader_election=election)
        second = daemons.start(ours, label="b", leader_election=election)
        leader, standby, leader_id = _leader_of(first, second)
        assert history.wait_for_holder(leader_id, after=0, timeout_s=ELECTION_TIMEOUT_S)
        standby.wait_ready()

        before = workload.create_pods([f"before-{i:02}" for i in range(40)], ours)
        workload.wait_bound(before, timeout_s=BIND_TIMEOUT_S)
        events = workload.wait_events("Scheduled", before, timeout_s=EVENT_TIMEOUT_S)
        leader_metrics, standby_metrics = leader.metrics(), standby.metrics()

        during = workload.create_pods([f"during-{i:02}" for i in range(60)], ours)
        poll_until(
            lambda: any(workload.placements(during).values()),
            "the leader binding the second batch",
            timeout_s=BIND_TIMEOUT_S,
        )
        leader.kill()
        killed_at = time.monotonic()
        after = workload.create_pods([f"after-{i:02}" for i in range(20)], ours)
        takeover = history.wait_for_new_holder(
            leader_id, after=killed_at, timeout_s=lease_s + retry_s + TAKEOVER_SLACK_S + 30
        )
        standby_id = poll_until(
            lambda: _identity(standby), "the standby leading", timeout_s=ELECTION_TIMEOUT_S
        )

    # Before the kill: the Lease holder did all the binding, the standby none.
    assert set(_scheduled_by_instance(events).values()) == {_reporting_instance(ours)}
    assert set(before) <= _bound_by(leader)
    assert leader_metrics.total("scheduler_schedule_attempts_total", result="scheduled") == 40
    assert leader_metrics.total("leader_election_master_status", name="kube-scheduler") == 1
    assert standby_metrics.total("scheduler_schedule_attempts_total") == 0
    assert standby_metrics.total("leader_election_master_status", name="kube-scheduler") == 0
    # The Lease went straight from the killed leader to the standby, nobody in between.
    assert takeover.holder == standby_id
    assert takeover.seen_at - killed_at <= lease_s + retry_s + TAKEOVER_SLACK_S
    assert history.holders() == [leader_id, standby_id]

    everyone = [*before, *during, *after]
    placed = workload.wait_bound(everyone, timeout_s=BIND_TIMEOUT_S)
    settled = poll_until(
        _Settled(workload, standby, after),
        "the standby's bindings, log lines and events agreeing",
        timeout_s=EVENT_TIMEOUT_S,
    )
    scheduled = settled.events

    assert all(placed.values())
    # No pod was bound twice: one Scheduled event at most, and no failed (409) attempts. A pod
    # the leader bound just before being killed may lack its event: events are best-effort.
    assert {pod: len(evs) for pod, evs in scheduled.items() if len(evs) > 1} == {}
    assert workload.events("FailedScheduling") == []
    assert {p for p in everyone if p not in scheduled} <= set(during)
    assert set(_scheduled_by_instance(scheduled).values()) == {_reporting_instance(ours)}
    by_leader, by_standby = _bound_by(leader), _bound_by(standby)
    assert set(after) <= by_standby
    assert by_leader.isdisjoint(by_standby)
    assert settled.binds >= len(after)


class _Settled:
    """A poll for the standby having finished: its scheduled-attempts count, its binding log
    lines and its Scheduled events name the same pods, the same on two polls in a row."""

    def __init__(self, workload: Workload, standby: SchedulerDaemon, after: list[str]) -> None:
        self.workload, self.standby, self.after = workload, standby, after
        self.previous = -1
        self.events: dict[str, list[dict[str, Any]]] = {}
        self.binds = 0

    def __call__(self) -> _Settled | None:
        metric = "scheduler_schedule_attempts_total"
        binds = int(self.standby.metrics().total(metric, result="scheduled"))
        logged = _bound_by(self.standby)
        events = self.workload.events_by_pod("Scheduled")
        agreed = binds == len(logged) and logged <= set(events) and set(self.after) <= logged
        stable, self.previous = binds == self.previous, binds
        self.events, self.binds = events, binds
        return self if agreed and stable else None


def test_sigterm_exits_zero_and_releases_the_lease_for_an_immediate_takeover(
    admin: ApiClient, daemons: DaemonLauncher, workload: Workload, namespace: str
) -> None:
    ours = unique("sched")
    # A long lease: a takeover well within it can only come from the release.
    election = LeaderElection(
        namespace, unique("lease"), lease_duration="15s", renew_deadline="10s", retry_period="1s"
    )
    lease_s = 15.0
    workload.create_nodes(4)  # room for 160 pods of 100m: the 90 below all fit
    with LeaseHistory(admin, namespace, election.name) as history:
        leader = daemons.start(ours, label="a", leader_election=election)
        leader_id = poll_until(
            lambda: _identity(leader), "the first replica leading", timeout_s=ELECTION_TIMEOUT_S
        )
        standby = daemons.start(ours, label="b", leader_election=election)
        standby.wait_ready()
        burst = workload.create_pods([f"burst-{i:02}" for i in range(80)], ours)
        poll_until(
            lambda: any(workload.placements(burst).values()),
            "the leader binding",
            timeout_s=BIND_TIMEOUT_S,
        )

        leader.send_signal(signal.SIGTERM)
        signalled_at = time.monotonic()
        exit_code = leader.wait_exit(lease_s)
        exited_after = time.monotonic() - signalled_at
        takeover = history.wait_for_new_holder(leader_id, after=signalled_at, timeout_s=lease_s)
        standby_id = poll_until(
            lambda: _identity(standby), "the standby leading", timeout_s=ELECTION_TIMEOUT_S
        )
        after = workload.create_pods([f"after-{i:02}" for i in range(10)], ours)
        placed = workload.wait_bound([*burst, *after], timeout_s=BIND_TIMEOUT_S)

    assert exit_code == 0
    assert exited_after < PROMPT_EXIT_S
    released = [v for v in history.versions if v.seen_at >= signalled_at and v.holder == ""]
    assert released, history.versions
    assert released[0].duration_s == 1
    assert history.holders() == [leader_id, "", standby_id]
    assert takeover.holder == standby_id
    assert takeover.seen_at - signalled_at < PROMPT_EXIT_S
    assert all(placed.values())
    # A graceful stop finishes its bindings and writes their events before exiting: every
    # pod has exactly one Scheduled event, from whichever replica bound it.
    events = workload.wait_events("Scheduled", [*burst, *after], timeout_s=EVENT_TIMEOUT_S)
    assert {pod: len(evs) for pod, evs in events.items() if len(evs) != 1} == {}
    assert workload.events("FailedScheduling") == []
    assert set(_scheduled_by_instance(events).values()) == {_reporting_instance(ours)}
    by_leader, by_standby = _bound_by(leader), _bound_by(standby)
    assert set(after) <= by_standby
    assert by_leader.isdisjoint(by_standby)
    assert by_leader and by_leader | by_standby == {*burst, *after}
