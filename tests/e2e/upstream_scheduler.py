"""kube-scheduler v1.36 itself, beside our daemon on the same apiserver: the reference its
answers are compared with. It runs without leader election, schedules pods naming
`default-scheduler` and serves its secure port on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import Metrics
from tests.e2e.daemon import poll_until
from tests.e2e.processes import ManagedProcess
from tests.e2e.processes import free_loopback_port
from tests.e2e.secure_port_client import secure_port_call

STARTUP_S = 60.0
SCHEDULER_NAME = "default-scheduler"


def start_kube_scheduler(
    binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    reviewer: Path,
    log: Path,
    *,
    config: Path | None = None,
    extra_args: Sequence[str] = (),
) -> tuple[ManagedProcess, int]:
    """Started, not yet serving; `reviewer` is the kubeconfig of its TokenReviews and
    SubjectAccessReviews, `config` a KubeSchedulerConfiguration file (which then names the
    kubeconfig and leader election itself). Returns the process and its secure port."""
    port = free_loopback_port()
    if config is None:
        settings = [f"--kubeconfig={control_plane.kubeconfig_path}", "--leader-elect=false"]
    else:
        settings = [f"--config={config}"]
    argv = [
        str(binaries.kube_scheduler),
        *settings,
        f"--authentication-kubeconfig={reviewer}",
        f"--authorization-kubeconfig={reviewer}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        *extra_args,
    ]
    process = ManagedProcess("kube-scheduler", argv, log)
    process.start()
    return process, port


@contextmanager
def kube_scheduler_running(
    binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    log: Path,
    *,
    config: Path | None = None,
) -> Iterator[ManagedProcess]:
    """kube-scheduler with the admin's credentials, stopped on the way out."""
    process, _ = start_kube_scheduler(
        binaries, control_plane, control_plane.kubeconfig_path, log, config=config
    )
    try:
        process.wait_until(process.running, STARTUP_S, "kube-scheduler running")
        yield process
    finally:
        process.stop()


def wait_upstream_ready(process: ManagedProcess, port: int, cert: tuple[Path, Path]) -> None:
    """Until kube-scheduler's /readyz answers 200 to `cert`."""
    process.wait_until(
        lambda: secure_port_call(port, "/readyz", client_cert=cert)[0] == 200,
        STARTUP_S,
        "kube-scheduler ready",
    )


def upstream_metrics(port: int, cert: tuple[Path, Path]) -> Metrics:
    """kube-scheduler's /metrics, once it lets `cert` read them (it may answer 403 until it
    has loaded its client CA)."""

    def scraped() -> Metrics | None:
        status, body = secure_port_call(port, "/metrics", client_cert=cert)
        return Metrics(body) if status == 200 else None

    return poll_until(scraped, "kube-scheduler's /metrics", timeout_s=STARTUP_S)
