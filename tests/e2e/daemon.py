"""kube-pyscheduler daemons as real subprocesses, exactly as a user starts them.

`DaemonLauncher` starts `python -m scheduler.app.cli run --kubeconfig ... --secure-port ...`
with its stdout and stderr in files, and stops whatever it started; a `--config` file that names
no cluster is given the kubeconfig in `clientConnection`, where the daemon then reads it.
`SchedulerDaemon` is one such process: signals, its HTTPS endpoints (self-signed, so
unverified), its metrics and its JSON log records. The secure port checks its callers as
kube-scheduler's does, so the daemons get the kubeconfig for their reviews too, and the harness
calls them with a client certificate (the admin's, in system:masters, unless a test gives
another). Waiting on a daemon always polls something observable with a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import TypeVar

import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.api_client import ApiResponse
from tests.e2e.processes import free_loopback_port

T = TypeVar("T")

POLL_INTERVAL_S = 0.1
# Importing the scheduler and its plugins takes a few seconds on a busy machine.
SERVING_TIMEOUT_S = 60.0
STOP_GRACE_S = 30.0
HTTP_TIMEOUT_S = 10.0
START_ATTEMPTS = 3


def poll_until(
    check: Callable[[], T | None],
    what: str,
    *,
    timeout_s: float,
    interval_s: float = POLL_INTERVAL_S,
) -> T:
    """Calls `check` until it returns something truthy, and returns that; fails with `what`
    and the last value seen once `timeout_s` has passed."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout_s:g} s (last: {value!r})")
        time.sleep(interval_s)


@dataclass(frozen=True)
class LeaderElection:
    """The `--leader-elect*` flags; short durations so takeovers happen within a test."""

    namespace: str
    name: str
    lease_duration: str = "4s"
    renew_deadline: str = "3s"
    retry_period: str = "1s"

    def flags(self) -> list[str]:
        return [
            "--leader-elect=true",
            f"--leader-elect-resource-namespace={self.namespace}",
            f"--leader-elect-resource-name={self.name}",
            f"--leader-elect-lease-duration={self.lease_duration}",
            f"--leader-elect-renew-deadline={self.renew_deadline}",
            f"--leader-elect-retry-period={self.retry_period}",
        ]


class Metrics:
    """One scrape of /metrics: every sample with its labels."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.samples: list[tuple[str, dict[str, str], float]] = [
            (sample.name, dict(sample.labels), float(sample.value))
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        ]

    def names(self) -> set[str]:
        return {name for name, _, _ in self.samples}

    def total(self, metric: str, /, **labels: str) -> float:
        """The sum of the samples of `metric` whose labels include `labels` (0 if none)."""
        return sum(
            value
            for name, sample_labels, value in self.samples
            if name == metric and labels.items() <= sample_labels.items()
        )

    def labelled(self, name: str) -> list[dict[str, str]]:
        return [labels for sample_name, labels, _ in self.samples if sample_name == name]


class SchedulerDaemon:
    """One `kube-pyscheduler run` process."""

    def __init__(
        self,
        label: str,
        argv: Sequence[str],
        log_dir: Path,
        port: int,
        *,
        client_cert: tuple[Path, Path] | None = None,
    ) -> None:
        self.label = label
        self.argv = list(argv)
        self.port = port
        self.stdout_path = log_dir / f"{label}.stdout"
        self.stderr_path = log_dir / f"{label}.stderr"
        self._popen: subprocess.Popen[bytes] | None = None
        # The serving certificate is generated at start-up: nothing to verify it against.
        self._tls = ssl.create_default_context()
        self._tls.check_hostname = False
        self._tls.verify_mode = ssl.CERT_NONE
        if client_cert is not None:
            self._tls.load_cert_chain(*client_cert)

    # ---- process ----------------------------------------------------------------------

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with self.stdout_path.open("ab") as out, self.stderr_path.open("ab") as err:
            self._popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                cwd=self.stdout_path.parent,
            )

    @property
    def popen(self) -> subprocess.Popen[bytes]:
        if self._popen is None:
            raise RuntimeError(f"daemon {self.label} was never started")
        return self._popen

    @property
    def pid(self) -> int:
        return self.popen.pid

    def running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def send_signal(self, signum: signal.Signals) -> None:
        self.popen.send_signal(signum)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no Lease release, in-flight work lost."""
        self.popen.kill()
        self.popen.wait(STOP_GRACE_S)

    def wait_exit(self, timeout_s: float) -> int:
        return self.popen.wait(timeout_s)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it does not exit within the grace period."""
        if not self.running():
            return
        self.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self.kill()

    # ---- HTTPS endpoints ----------------------------------------------------------------

    def get(self, path: str) -> ApiResponse:
        """GET on the secure port; HTTP error statuses are returned, connection errors raised."""
        url = f"https://127.0.0.1:{self.port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S, context=self._tls) as resp:
                return ApiResponse(resp.status, resp.read().decode())
        except urllib.error.HTTPError as err:
            with err:
                return ApiResponse(err.code, err.read().decode())

    def metrics(self) -> Metrics:
        answer = self.get("/metrics")
        assert answer.status == 200, answer
        return Metrics(answer.body)

    def wait_serving(self, timeout_s: float = SERVING_TIMEOUT_S) -> None:
        """Until /healthz answers at all; fails at once if the process exits."""

        def answered() -> bool:
            self.require_running("while starting")
            with contextlib.suppress(OSError):
                self.get("/healthz")
                return True
            return False

        poll_until(answered, f"{self.label} serving on {self.port}", timeout_s=timeout_s)

    def wait_ready(self, timeout_s: float = SERVING_TIMEOUT_S) -> None:
        def ready() -> bool:
            self.require_running("while waiting for /readyz")
            with contextlib.suppress(OSError):
                return self.get("/readyz").status == 200
            return False

        poll_until(ready, f"{self.label} /readyz", timeout_s=timeout_s)

    def require_running(self, when: str) -> None:
        code = self.popen.poll()
        if code is not None:
            raise AssertionError(
                f"daemon {self.label} exited with {code} {when}\n{self.logs_tail()}"
            )

    # ---- logs --------------------------------------------------------------------------

    def log_records(self) -> list[dict[str, Any]]:
        """The JSON log records on stderr (other lines, e.g. a traceback, as {"msg": line})."""
        records = []
        for line in self.stderr_path.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                record = {"msg": line}
            records.append(record if isinstance(record, dict) else {"msg": line})
        return records

    def records(self, event: str) -> list[dict[str, Any]]:
        """The log records whose message is `event`."""
        return [r for r in self.log_records() if r.get("msg") == event]

    def records_starting(self, prefix: str) -> list[dict[str, Any]]:
        return [r for r in self.log_records() if str(r.get("msg", "")).startswith(prefix)]

    def logs_tail(self, lines: int = 60) -> str:
        parts = []
        for path in (self.stdout_path, self.stderr_path):
            text = path.read_text(errors="replace") if path.exists() else ""
            parts.append(f"--- {path.name} (last {lines} lines) ---")
            parts.append("\n".join(text.splitlines()[-lines:]))
        return "\n".join(parts)


class DaemonLauncher:
    """Starts daemons against one cluster and stops every one of them at the end."""

    def __init__(
        self, kubeconfig: Path, log_dir: Path, *, client_cert: tuple[Path, Path] | None = None
    ) -> None:
        self.kubeconfig = kubeconfig
        self.client_cert = client_cert
        self.log_dir = log_dir
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.started: list[SchedulerDaemon] = []
        self._configs_written = 0

    def argv(
        self,
        scheduler_name: str,
        port: int,
        *,
        kubeconfig: Path | None = None,
        leader_election: LeaderElection | None = None,
        extra_args: Iterable[str] = (),
        review_kubeconfig: Path | None = None,
    ) -> list[str]:
        """`review_kubeconfig` is for the secure port's reviews; by default `kubeconfig`."""
        election = leader_election.flags() if leader_election else ["--leader-elect=false"]
        credentials = kubeconfig or self.kubeconfig
        reviewer = review_kubeconfig or credentials
        return [
            sys.executable,
            "-m",
            "scheduler.app.launch",
            "run",
            f"--kubeconfig={credentials}",
            f"--authentication-kubeconfig={reviewer}",
            f"--authorization-kubeconfig={reviewer}",
            f"--secure-port={port}",
            "--bind-address=127.0.0.1",
            f"--scheduler-name={scheduler_name}",
            "--logging-format=json",
            "-v=2",
            *election,
            *(self._naming_the_cluster(arg, credentials) for arg in extra_args),
        ]

    def _naming_the_cluster(self, arg: str, kubeconfig: Path) -> str:
        """`--config=FILE`, with a copy of FILE naming `kubeconfig` if FILE names no cluster:
        given --config, the daemon ignores --kubeconfig, as kube-scheduler does."""
        if not arg.startswith("--config="):
            return arg
        path = Path(arg.removeprefix("--config="))
        config = yaml.safe_load(path.read_text())
        connection = config.get("clientConnection") or {}
        if connection.get("kubeconfig"):
            return arg
        config["clientConnection"] = {**connection, "kubeconfig": str(kubeconfig)}
        self._configs_written += 1
        copy = self.log_dir / f"config-{self._configs_written}-{path.name}"
        # JSON is YAML, which the daemon reads.
        copy.write_text(json.dumps(config))
        return f"--config={copy}"

    def start(
        self,
        scheduler_name: str,
        *,
        label: str = "daemon",
        kubeconfig: Path | None = None,
        leader_election: LeaderElection | None = None,
        extra_args: Iterable[str] = (),
        review_kubeconfig: Path | None = None,
    ) -> SchedulerDaemon:
        """Starts a daemon and waits until its secure port answers (retrying on a new port if
        another process took the chosen one first)."""
        extra = list(extra_args)
        for attempt in range(1, START_ATTEMPTS + 1):
            port = free_loopback_port()
            name = f"{label}-{len(self.started)}"
            argv = self.argv(
                scheduler_name,
                port,
                kubeconfig=kubeconfig,
                leader_election=leader_election,
                extra_args=extra,
                review_kubeconfig=review_kubeconfig,
            )
            daemon = SchedulerDaemon(name, argv, self.log_dir, port, client_cert=self.client_cert)
            self.started.append(daemon)
            daemon.start()
            try:
                daemon.wait_serving()
            except AssertionError:
                in_use = "address already in use" in daemon.logs_tail().lower()
                if attempt < START_ATTEMPTS and in_use and not daemon.running():
                    continue
                raise
            return daemon
        raise AssertionError("unreachable")

    def stop_all(self) -> None:
        for daemon in self.started:
            daemon.stop()

    def report(self) -> str:
        return "\n".join(
            f"=== {d.label}: {' '.join(d.argv)}\n{d.logs_tail()}" for d in self.started
        )
