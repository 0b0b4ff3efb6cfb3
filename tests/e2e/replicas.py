"""Scheduler replicas with leader election, kept running the way a Deployment keeps its pods.

Either scheduler runs from the same KubeSchedulerConfiguration: its own kubeconfig, leader
election on one Lease, one profile. Every process started (an "incarnation") gets a client
certificate user of its own, `<prefix>-<slot>-<generation>`, so the apiserver's audit log says
which process wrote each Lease version and made each Binding. When an incarnation has exited
(killed, or ended by itself on losing the Lease) `ensure_running` starts the next one in its
slot, so a standby always exists. A replica that exits by itself soon after starting (the
apiserver being away, say) is started again only after a pause, as a kubelet's back-off does.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ADMIN_GROUPS
from tests.e2e.controlplane import ControlPlane
from tests.e2e.processes import ManagedProcess
from tests.e2e.processes import free_loopback_port

OURS = "ours"
UPSTREAM = "upstream"
FLAVOURS = (OURS, UPSTREAM)
STOP_GRACE_S = 20.0
# The earliest a slot is restarted after its previous start, unless the test killed it.
RESTART_SPACING_S = 3.0


@dataclass(frozen=True)
class ElectionTimings:
    """Upstream's defaults."""

    lease_duration_s: float = 15.0
    renew_deadline_s: float = 10.0
    retry_period_s: float = 2.0


@dataclass(frozen=True)
class ReplicaSpec:
    flavour: str
    scheduler_name: str
    lease_namespace: str
    lease_name: str
    timings: ElectionTimings = ElectionTimings()
    replicas: int = 2
    user_prefix: str = "sched"

    def __post_init__(self) -> None:
        if self.flavour not in FLAVOURS:
            raise ValueError(f"flavour: {self.flavour!r} is not one of {', '.join(FLAVOURS)}")
        if self.replicas < 1:
            raise ValueError(f"replicas: {self.replicas} must be at least 1")


def scheduler_config(spec: ReplicaSpec, kubeconfig: Path) -> dict[str, Any]:
    timings = spec.timings
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "leaderElection": {
            "leaderElect": True,
            "leaseDuration": f"{timings.lease_duration_s:g}s",
            "renewDeadline": f"{timings.renew_deadline_s:g}s",
            "retryPeriod": f"{timings.retry_period_s:g}s",
            "resourceLock": "leases",
            "resourceName": spec.lease_name,
            "resourceNamespace": spec.lease_namespace,
        },
        "profiles": [{"schedulerName": spec.scheduler_name}],
    }


def scheduler_argv(
    flavour: str, binaries: ControlPlaneBinaries, config: Path, kubeconfig: Path, port: int
) -> list[str]:
    if flavour == UPSTREAM:
        return [
            str(binaries.kube_scheduler),
            f"--config={config}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "-v=1",
        ]
    return [
        sys.executable,
        "-m",
        "scheduler.app.cli",
        "run",
        f"--config={config}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        "--logging-format=json",
    ]


class Replicas:
    def __init__(
        self, spec: ReplicaSpec, plane: ControlPlane, binaries: ControlPlaneBinaries, log_dir: Path
    ) -> None:
        self.spec = spec
        self._plane = plane
        self._binaries = binaries
        self._log_dir = log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        self._slots: list[ManagedProcess | None] = [None] * spec.replicas
        self._generations = [0] * spec.replicas
        self._not_before = [0.0] * spec.replicas
        self._slot_of: dict[str, int] = {}
        # Every incarnation ever started, by user, in start order.
        self.incarnations: dict[str, ManagedProcess] = {}
        self.exits: dict[str, int] = {}

    def ensure_running(self) -> list[str]:
        """Starts a new incarnation in every slot whose process is not running; returns their
        users. Records how the previous one ended (-9 for SIGKILL)."""
        started = []
        for slot, process in enumerate(self._slots):
            if process is not None and process.running():
                continue
            if time.monotonic() < self._not_before[slot]:
                continue
            if process is not None and (code := process.exit_code()) is not None:
                self.exits.setdefault(process.name, code)
            started.append(self._start(slot))
        return started

    def kill(self, user: str) -> float:
        """SIGKILLs the incarnation `user`; returns the epoch time just before the signal."""
        process = self.incarnations[user]
        killed_at = time.time()
        process.kill()
        self.exits[user] = -9
        self._not_before[self._slot_of[user]] = 0.0
        return killed_at

    def stop_all(self) -> None:
        for process in self._slots:
            if process is not None:
                process.stop(STOP_GRACE_S)

    def logs_tail(self, lines: int = 30) -> str:
        return "\n".join(
            f"--- {user} ---\n{process.log_tail(lines)}"
            for user, process in self.incarnations.items()
        )

    def _start(self, slot: int) -> str:
        user = f"{self.spec.user_prefix}-{slot}-{self._generations[slot]}"
        self._generations[slot] += 1
        kubeconfig = self._plane.client_kubeconfig(user, ADMIN_GROUPS)
        config = self._log_dir / f"{user}-config.yaml"
        # JSON is YAML, and both schedulers read their configuration as YAML.
        config.write_text(json.dumps(scheduler_config(self.spec, kubeconfig)))
        argv = scheduler_argv(
            self.spec.flavour, self._binaries, config, kubeconfig, free_loopback_port()
        )
        process = ManagedProcess(user, argv, self._log_dir / f"{user}.log")
        process.start()
        self._slots[slot] = process
        self._slot_of[user] = slot
        self._not_before[slot] = time.monotonic() + RESTART_SPACING_S
        self.incarnations[user] = process
        return user
