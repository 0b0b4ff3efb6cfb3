"""`kubernetes_feature_enabled` beside kube-scheduler's: given the same --feature-gates (a beta
gate turned off, a GA gate set to its default), both report the same gates, stages and states.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import Metrics
from tests.e2e.upstream_scheduler import start_kube_scheduler
from tests.e2e.upstream_scheduler import upstream_metrics
from tests.e2e.upstream_scheduler import wait_upstream_ready
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

GATES = "--feature-gates=OpportunisticBatching=false,SchedulerQueueingHints=true"
FAMILY = "kubernetes_feature_enabled"


def _states(metrics: Metrics) -> dict[tuple[str, str], float]:
    return {
        (labels["name"], labels["stage"]): value
        for name, labels, value in metrics.samples
        if name == FAMILY
    }


def test_every_gate_is_reported_as_kube_scheduler_reports_it(
    e2e_binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    tmp_path: Path,
) -> None:
    ours = daemons.start(unique("sched"), extra_args=[GATES])
    upstream, port = start_kube_scheduler(
        e2e_binaries,
        control_plane,
        control_plane.kubeconfig_path,
        tmp_path / "kube-scheduler.log",
        extra_args=[GATES],
    )
    cert = control_plane.admin_cert_paths
    try:
        wait_upstream_ready(upstream, port, cert)
        theirs = upstream_metrics(port, cert)
    finally:
        upstream.stop()

    mine = _states(ours.metrics())
    assert mine == _states(theirs)
    # Spelled out, so that two empty scrapes cannot agree.
    assert mine[("OpportunisticBatching", "BETA")] == 0
    assert mine[("SchedulerQueueingHints", "")] == 1
