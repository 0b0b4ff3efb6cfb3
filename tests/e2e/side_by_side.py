"""Our daemon and kube-scheduler v1.36.3 on one control plane, started alike, for tests that
compare what the two do with the same objects (often on a plane started with a feature gate)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.upstream_scheduler import start_kube_scheduler
from tests.e2e.upstream_scheduler import wait_upstream_ready
from tests.e2e.workload import unique

# Upper bounds for waiting on the servers, not synchronisation delays.
BIND_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 30.0


def admin_and_namespace(plane: ControlPlane) -> tuple[ApiClient, str]:
    """An admin client of `plane` and a namespace of its own on it (never deleted: without
    kube-controller-manager it would stay Terminating, and the plane's etcd is thrown away
    afterwards anyway)."""
    admin = plane.admin_client()
    name = f"e2e-{uuid.uuid4().hex[:10]}"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    created = admin.post("/api/v1/namespaces", body)
    assert created.status == 201, created
    return admin, name


@contextmanager
def both_schedulers(
    binaries: ControlPlaneBinaries, plane: ControlPlane, tmp_path: Path, args: Sequence[str]
) -> Iterator[str]:
    """Our daemon and kube-scheduler, each given `args` and both ready; yields our daemon's
    scheduler name (kube-scheduler's is `upstream_scheduler.SCHEDULER_NAME`). Both are stopped
    on the way out."""
    launcher = DaemonLauncher(plane.kubeconfig_path, tmp_path / "daemons")
    ours = unique("sched")
    log = tmp_path / "kube-scheduler.log"
    upstream, port = start_kube_scheduler(
        binaries, plane, plane.kubeconfig_path, log, extra_args=list(args)
    )
    try:
        launcher.start(ours, extra_args=list(args)).wait_ready()
        wait_upstream_ready(upstream, port, plane.admin_cert_paths)
        yield ours
    finally:
        upstream.stop()
        launcher.stop_all()
