"""A connection to the apiserver that goes silent without closing is noticed, and scheduling
resumes, within a minute.

One daemon (leader election off: the point is the watches, not the Lease) reaches the apiserver
through a TCP proxy. Once it has scheduled a first batch and gone idle, the proxy black-holes
every open connection: nothing arrives on them any more, not even a close, while new
connections go through. Pods created then can only reach the daemon on a new connection, which
it opens only once it has noticed that the old one is dead.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from tests.e2e.controlplane import ADMIN_GROUPS
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.processes import free_loopback_port
from tests.e2e.tcp_proxy import TcpProxy
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

# Upstream kube-scheduler recovers in about 44 s (its HTTP/2 health ping); 60 s is the bound.
RESUME_WITHIN_S = 60.0
BIND_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 30.0


def test_scheduling_resumes_within_a_minute_after_the_connection_is_black_holed(
    control_plane: ControlPlane, daemons: DaemonLauncher, workload: Workload
) -> None:
    ours = unique("sched")
    workload.create_nodes(2)
    apiserver_port = urlsplit(control_plane.server_url).port
    assert apiserver_port is not None
    proxy_port = free_loopback_port()
    kubeconfig = control_plane.client_kubeconfig(
        unique("black-holed"), ADMIN_GROUPS, server_url=f"https://127.0.0.1:{proxy_port}"
    )
    with TcpProxy(proxy_port, apiserver_port) as proxy:
        proxy.start()
        daemon = daemons.start(ours, kubeconfig=kubeconfig)
        before = workload.create_pods([f"before-{i}" for i in range(5)], ours)
        workload.wait_bound(before, timeout_s=BIND_TIMEOUT_S)
        # Its Events written, the daemon is idle: only its watches are open.
        workload.wait_events("Scheduled", before, timeout_s=EVENT_TIMEOUT_S)

        silenced = proxy.black_hole()
        holed_at = time.monotonic()
        connections_then = proxy.connections
        after = workload.create_pods([f"after-{i}" for i in range(5)], ours)
        placed = workload.wait_bound(after, timeout_s=RESUME_WITHIN_S)
        resumed_after = time.monotonic() - holed_at
        reconnections = proxy.connections - connections_then

    print(f"black-holed {silenced} connections; scheduling resumed after {resumed_after:.1f} s")
    daemon.require_running("after the black hole")
    assert silenced >= 1
    assert set(placed.values()) <= set(workload.nodes)
    assert resumed_after <= RESUME_WITHIN_S
    # The pods came in on connections opened after the black hole: it did notice.
    assert reconnections >= 1
