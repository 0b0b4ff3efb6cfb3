"""The scheduler's health checks, named, worded and placed as kube-scheduler's.

As kube-scheduler installs them: `/healthz` runs the leader-election watchdog alone when leader
election is on, and the `ping` check when it is off; `/livez` runs `ping` only (the server
installs it so); `/readyz` runs the watchdog (with leader election), `shutdown` and
`sched-handler-sync`. A failure of the scheduler's own machinery has no check: the process
shuts down and exits non-zero instead (see `Daemon.wait`).
"""

from __future__ import annotations

from collections.abc import Callable

from scheduler.app.healthz import PING
from scheduler.app.healthz import HealthCheck
from scheduler.core.leader_election import ELECTOR_NAME
from scheduler.core.leader_election import LeaderElector
from scheduler.framework.clock import Clock

HANDLER_SYNC = "sched-handler-sync"
SHUTDOWN = "shutdown"
LEADER_ELECTION = "leaderElection"


def handler_sync_check(synced: Callable[[], bool]) -> HealthCheck:
    """Fails until the informers' event handlers have synced."""
    return lambda: True if synced() else "handlers are not fully synchronized"


def shutdown_check(shutting_down: Callable[[], bool]) -> HealthCheck:
    """Fails once shutdown has begun, so load balancers stop sending traffic first."""
    return lambda: "process is shutting down" if shutting_down() else True


def leader_election_check(elector: LeaderElector, clock: Clock) -> HealthCheck:
    """The watchdog: fails once the Lease record last seen names us and has gone unrenewed
    for far too long (see `LeaderElector.healthy`)."""
    # Named after the elector, not the Lease (kube-scheduler's is "kube-scheduler" always).
    message = f"failed election to renew leadership on lease {ELECTOR_NAME}"
    return lambda: True if elector.healthy(clock.now()) else message


def scheduler_checks(
    *,
    handlers_synced: Callable[[], bool],
    shutting_down: Callable[[], bool],
    leader_election: HealthCheck | None = None,
) -> tuple[dict[str, HealthCheck], dict[str, HealthCheck]]:
    """(`/healthz`, `/readyz`) checks in kube-scheduler's order; `leader_election` when it is
    on. Upstream hands the watchdog to `/healthz` in place of `ping`, not beside it."""
    healthz = {LEADER_ELECTION: leader_election} if leader_election is not None else dict(PING)
    readiness: dict[str, HealthCheck] = {}
    if leader_election is not None:
        readiness[LEADER_ELECTION] = leader_election
    readiness[SHUTDOWN] = shutdown_check(shutting_down)
    readiness[HANDLER_SYNC] = handler_sync_check(handlers_synced)
    return healthz, readiness
