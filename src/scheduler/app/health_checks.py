"""The scheduler's liveness and readiness checks, named and worded as kube-scheduler's."""

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
SCHEDULER_FAILED = "scheduler-failed"


def handler_sync_check(synced: Callable[[], bool]) -> HealthCheck:
    """Fails until the informers' event handlers have synced."""
    return lambda: True if synced() else "waiting for handlers to sync"


def shutdown_check(shutting_down: Callable[[], bool]) -> HealthCheck:
    """Fails once shutdown has begun, so load balancers stop sending traffic first."""
    return lambda: "process is shutting down" if shutting_down() else True


def leader_election_check(elector: LeaderElector, clock: Clock) -> HealthCheck:
    """The watchdog: fails if we lead but have not renewed the lease for far too long."""
    # Named after the elector, not the Lease (kube-scheduler's is "kube-scheduler" always).
    message = f"failed election to renew leadership on lease {ELECTOR_NAME}"
    return lambda: True if elector.healthy(clock.now()) else message


def scheduler_failed_check(fatal_error: Callable[[], BaseException | None]) -> HealthCheck:
    """Fails once the scheduler's own machinery has failed, so the process gets restarted."""

    def check() -> bool | str:
        error = fatal_error()
        return True if error is None else f"scheduler failed: {type(error).__name__}: {error}"

    return check


def scheduler_checks(
    *,
    handlers_synced: Callable[[], bool],
    shutting_down: Callable[[], bool],
    leader_election: HealthCheck | None = None,
) -> tuple[dict[str, HealthCheck], dict[str, HealthCheck]]:
    """(liveness, readiness) in kube-scheduler's order; `leader_election` when it is on."""
    liveness = dict(PING)
    readiness: dict[str, HealthCheck] = {}
    if leader_election is not None:
        liveness[LEADER_ELECTION] = leader_election
        readiness[LEADER_ELECTION] = leader_election
    readiness[SHUTDOWN] = shutdown_check(shutting_down)
    readiness[HANDLER_SYNC] = handler_sync_check(handlers_synced)
    return liveness, readiness
