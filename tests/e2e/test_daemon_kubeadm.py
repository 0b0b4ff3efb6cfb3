"""kubeadm's kube-scheduler static-pod command line, with --config pointing at our
configuration, starts our daemon, and it schedules.

kubeadm v1.36 runs `kube-scheduler --bind-address=127.0.0.1 --leader-elect=true
--kubeconfig=K --authentication-kubeconfig=K --authorization-kubeconfig=K`; the only flag added
here is --secure-port, so that tests running side by side do not fight over 10259.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import SchedulerDaemon
from tests.e2e.lease_history import LEASES
from tests.e2e.processes import free_loopback_port
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

BIND_TIMEOUT_S = 60.0


def kubeadm_command(kubeconfig: Path) -> list[str]:
    return [
        "--bind-address=127.0.0.1",
        "--leader-elect=true",
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
    ]


def test_the_kubeadm_command_line_runs_our_scheduler(
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    workload: Workload,
    namespace: str,
    tmp_path: Path,
) -> None:
    ours = unique("kubeadm")
    kubeconfig = control_plane.kubeconfig_path
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        # kube-scheduler reads the cluster from here when --config is given.
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "leaderElection": {"resourceNamespace": namespace, "resourceName": ours},
        "profiles": [{"schedulerName": ours}],
    }
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    port = free_loopback_port()
    argv = [
        sys.executable,
        "-m",
        "scheduler.app.cli",
        *kubeadm_command(kubeconfig),
        f"--config={config_path}",
        f"--secure-port={port}",
    ]
    daemon = SchedulerDaemon(
        "kubeadm", argv, daemons.log_dir, port, client_cert=control_plane.admin_cert_paths
    )
    daemons.started.append(daemon)
    daemon.start()
    daemon.wait_serving()

    workload.create_nodes(2)
    pods = workload.create_pods(["a", "b", "c"], ours)
    placed = workload.wait_bound(pods, timeout_s=BIND_TIMEOUT_S)

    assert set(placed.values()) <= set(workload.nodes)
    # It scheduled as the elected leader: it holds the Lease of its configuration.
    lease = control_plane.admin_client().get(f"{LEASES.format(namespace=namespace)}/{ours}")
    assert lease.status == 200 and lease.body["spec"]["holderIdentity"]
