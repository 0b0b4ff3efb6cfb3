"""A kube-apiserver restart: without leader election the daemon rides it out (reconnects,
relists, keeps scheduling); a leader that cannot renew its Lease meanwhile exits non-zero, as
kube-scheduler does, for its Deployment to restart it."""

from __future__ import annotations

import threading
import time

import pytest

from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import LeaderElection
from tests.e2e.daemon import poll_until
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

# Upper bounds for waiting, not synchronisation delays. After a restart the informers come
# back after their backoff (capped at 30 s) and failed bindings after the pod backoff (10 s).
BIND_TIMEOUT_S = 90.0
EVENT_TIMEOUT_S = 30.0
RESTART_GRACE_S = 5.0


def test_every_pod_is_scheduled_across_an_apiserver_restart(
    control_plane: ControlPlane, daemons: DaemonLauncher, workload: Workload
) -> None:
    ours = unique("sched")
    nodes = set(workload.create_nodes(4))
    daemon = daemons.start(ours)
    before = workload.create_pods([f"before-{i:02}" for i in range(30)], ours)
    workload.wait_bound(before, timeout_s=BIND_TIMEOUT_S)
    # Created just before the server goes away: some are bound, some are mid-binding and
    # some are still queued when it stops.
    racing = workload.create_pods([f"racing-{i:02}" for i in range(30)], ours)

    # With watches open (the daemon's informers) the server would hold its shutdown for up
    # to a minute; it stops listening at once, so a short grace shows the daemon the same.
    control_plane.restart_apiserver(grace_s=RESTART_GRACE_S)
    after = workload.create_pods([f"after-{i:02}" for i in range(30)], ours)
    everyone = [*before, *racing, *after]
    placed = workload.wait_bound(everyone, timeout_s=BIND_TIMEOUT_S)

    daemon.require_running("after the apiserver restart")
    # It did notice: its pod watch broke, and it listed and watched again.
    failures = daemon.records("List/watch failed; retrying")
    assert any(r.get("informer") == "pods" for r in failures), failures
    assert set(placed.values()) <= nodes
    # Pods created after the restart came in through a new list or watch.
    scheduled = workload.wait_events("Scheduled", after, timeout_s=EVENT_TIMEOUT_S)
    assert all(len(scheduled[p]) == 1 for p in after)
    # Nothing was bound twice. (A binding the server made while its answer was lost would
    # count as a failed attempt, so the count may fall short of the pods, never exceed them.)
    scheduled_attempts = daemon.metrics().total(
        "scheduler_schedule_attempts_total", result="scheduled"
    )
    assert len(before) + len(after) <= scheduled_attempts <= len(everyone)


def test_a_leader_that_cannot_renew_exits_non_zero(
    control_plane: ControlPlane, daemons: DaemonLauncher, namespace: str
) -> None:
    election = LeaderElection(namespace, unique("lease"))
    renew_deadline_s, retry_period_s = 3.0, 1.0
    daemon = daemons.start(unique("sched"), leader_election=election)
    poll_until(
        lambda: daemon.records("Successfully acquired lease"), "leading", timeout_s=BIND_TIMEOUT_S
    )

    # The server is gone for at least the grace period, longer than the renew deadline.
    restart = threading.Thread(
        target=control_plane.restart_apiserver, kwargs={"grace_s": RESTART_GRACE_S}
    )
    stopped_at = time.monotonic()
    restart.start()
    try:
        exit_code = daemon.wait_exit(BIND_TIMEOUT_S)
        exited_after = time.monotonic() - stopped_at
    finally:
        restart.join()

    assert exit_code == 1
    # Leadership ends a renew deadline after the last renewal, up to a retry period before.
    assert renew_deadline_s - retry_period_s <= exited_after < RESTART_GRACE_S + renew_deadline_s
    assert daemon.records("Leaderelection lost")
