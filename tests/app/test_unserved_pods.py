"""The scheduling daemon counts pending pods that no running scheduler serves."""

from __future__ import annotations

from scheduler.cluster.sim import SimCluster
from scheduler.framework.clock import SystemClock
from scheduler.testing import make_pod
from tests.app.daemon_on_sim import scheduling_daemon
from tests.app.daemon_on_sim import until


async def test_the_daemon_counts_pending_pods_no_scheduler_serves() -> None:
    cluster = SimCluster(clock=SystemClock())
    cluster.load(
        [
            make_pod("ours", "ns").scheduler("production").dict(),
            make_pod("default", "ns").dict(),
            make_pod("gone-1", "ns").scheduler("retired").dict(),
            make_pod("gone-2", "ns").scheduler("retired").dict(),
            # Bound pods are not stuck, whatever they name.
            make_pod("bound", "ns").scheduler("retired").node("n").dict(),
        ]
    )
    daemon = scheduling_daemon("production", cluster)
    await daemon.start()
    try:
        await until(daemon._informers_synced)
        text = daemon.metrics.render().decode()
    finally:
        await daemon.shutdown()

    lines = [line for line in text.splitlines() if line.startswith("scheduler_unserved_pods")]
    assert lines == ['scheduler_unserved_pods{scheduler_name="retired"} 2.0']
