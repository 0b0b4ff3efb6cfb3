"""The two schedulers of the side-by-side benchmark: their configuration, command and process.

Both get the same KubeSchedulerConfiguration shape: the admin kubeconfig with QPS/burst 5000
(as scheduler_perf uses), no leader election unless asked (a deployment's default is on; a
lone replica then takes a fresh Lease as it starts), percentageOfNodesToScore 100 (or left
unset, for each scheduler's own default) and one profile. Only the profile's schedulerName
differs.

A third kind, the null scheduler (bench.null_scheduler), binds pods with no logic at all; it
reads only the kubeconfig.
"""

from __future__ import annotations

import compileall
import importlib.util
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.processes import free_loopback_port

UPSTREAM = "kube-scheduler"
OURS = "kube-pyscheduler"
NULL = "null-scheduler"
NULL_EVENTS = "null-scheduler+events"
STOP_GRACE_S = 20.0


@dataclass(frozen=True)
class SchedulerKind:
    """Which scheduler to run and under which profile name its pods are submitted."""

    label: str
    scheduler_name: str


KINDS = (
    SchedulerKind(label=UPSTREAM, scheduler_name="default-scheduler"),
    SchedulerKind(label=OURS, scheduler_name="kube-pyscheduler"),
)
NULL_KIND = SchedulerKind(label=NULL, scheduler_name="null-scheduler")
NULL_EVENTS_KIND = SchedulerKind(label=NULL_EVENTS, scheduler_name="null-scheduler")
ALL_KINDS = (*KINDS, NULL_KIND, NULL_EVENTS_KIND)


def scheduler_config(
    kubeconfig: Path,
    scheduler_name: str,
    profile: dict[str, Any] | None = None,
    *,
    percentage: int | None = 100,
    leader_elect: bool = False,
) -> dict[str, Any]:
    """`profile` adds fields (e.g. `plugins`) to the one profile; `percentage` None leaves
    percentageOfNodesToScore to the scheduler's default."""
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 5000, "burst": 5000},
        "leaderElection": {"leaderElect": leader_elect},
        "profiles": [{"schedulerName": scheduler_name, **(profile or {})}],
    }
    if percentage is not None:
        config["percentageOfNodesToScore"] = percentage
    return config


def byte_compile_python_schedulers() -> None:
    """Compile the modules kube-pyscheduler and the null scheduler import, ahead of their
    runs, as the container image does (deploy/Dockerfile). Where the environment forbids
    writing bytecode (PYTHONDONTWRITEBYTECODE) each start would otherwise compile all of them
    in memory again, a cost no deployment pays."""
    for package in ("scheduler", "plugins"):
        found = importlib.util.find_spec(package)
        for location in (found.submodule_search_locations or []) if found else []:
            compileall.compile_dir(location, quiet=1)


def scheduler_argv(
    kind: SchedulerKind,
    kube_scheduler: Path,
    config: Path,
    kubeconfig: Path,
    port: int,
    *,
    leader_elect: bool = False,
) -> list[str]:
    if kind.label == UPSTREAM:
        return [
            str(kube_scheduler),
            f"--config={config}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "-v=1",
        ]
    if kind.label in (NULL, NULL_EVENTS):
        return [
            sys.executable,
            "-m",
            "bench.null_scheduler",
            "--kubeconfig",
            str(kubeconfig),
            "--scheduler-name",
            kind.scheduler_name,
            *(["--scheduled-events"] if kind.label == NULL_EVENTS else []),
        ]
    return [
        sys.executable,
        "-m",
        "scheduler.app.launch",
        "run",
        "--config",
        str(config),
        f"--leader-elect={str(leader_elect).lower()}",
        "--secure-port",
        str(port),
        "--bind-address",
        "127.0.0.1",
    ]


class SchedulerProcess:
    """One scheduler run: writes its config, starts it with a log file, stops it for sure."""

    def __init__(
        self,
        kind: SchedulerKind,
        kube_scheduler: Path,
        kubeconfig: Path,
        work_dir: Path,
        *,
        profile: dict[str, Any] | None = None,
        percentage: int | None = 100,
        leader_elect: bool = False,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.kind = kind
        self.log_path = work_dir / f"{kind.label}.log"
        config_path = work_dir / f"{kind.label}-config.yaml"
        # JSON is valid YAML, and both configuration loaders read YAML.
        config = scheduler_config(
            kubeconfig,
            kind.scheduler_name,
            profile,
            percentage=percentage,
            leader_elect=leader_elect,
        )
        config_path.write_text(json.dumps(config))
        port = free_loopback_port()
        argv = scheduler_argv(
            kind, kube_scheduler, config_path, kubeconfig, port, leader_elect=leader_elect
        )
        self.argv = [
            *argv,
            *extra_args,
        ]
        self._popen: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Starts the process; returns the monotonic time just before it was spawned."""
        started = time.monotonic()
        with self.log_path.open("ab") as log:
            self._popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return started

    @property
    def pid(self) -> int:
        if self._popen is None:
            raise RuntimeError(f"{self.kind.label} was never started")
        return self._popen.pid

    def require_running(self) -> None:
        if self._popen is not None and (code := self._popen.poll()) is not None:
            raise RuntimeError(f"{self.kind.label} exited with code {code}\n{self.log_tail()}")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period; safe to call more than once."""
        popen, self._popen = self._popen, None
        if popen is None or popen.poll() is not None:
            return
        popen.send_signal(signal.SIGTERM)
        try:
            popen.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return "(no log)"
        return f"--- {self.log_path} (last {lines} lines) ---\n" + "\n".join(text[-lines:])
