"""A leader whose client sends slowly (a low QPS) binds every pod however long its Bindings
wait for the rate limiter: its renewals, on a client of their own, keep its tenure going."""

from __future__ import annotations

import pytest

from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import LeaderElection
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

PODS = 24
# Two Bindings a second: the last of the burst waits about 12 s, four renew deadlines (3 s).
SLOW_CLIENT = ("--kube-api-qps=2", "--kube-api-burst=2")
# An upper bound for waiting, not a synchronisation delay.
BIND_TIMEOUT_S = 120.0


def test_bindings_that_wait_long_for_the_rate_limiter_still_bind(
    daemons: DaemonLauncher, workload: Workload, namespace: str
) -> None:
    ours = unique("sched")
    election = LeaderElection(namespace, unique("lease"))
    workload.create_nodes(4)
    daemons.start(ours, leader_election=election, extra_args=SLOW_CLIENT)
    names = workload.create_pods([f"p-{i}" for i in range(PODS)], ours)
    workload.wait_bound(names, timeout_s=BIND_TIMEOUT_S)
    workload.wait_events("Scheduled", names, timeout_s=BIND_TIMEOUT_S)
    # Not one attempt was refused for want of the lease the replica held all along.
    refused = [e["note"] for e in workload.events("FailedScheduling")]
    assert refused == []
