"""Child processes of the test control plane: start with a log file, poll, stop politely."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

POLL_INTERVAL_S = 0.2


class ProcessExitedError(RuntimeError):
    """A child process ended while we were waiting for it to become ready."""


def free_loopback_port() -> int:
    """A port nobody listens on right now (another process may still take it before we do)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ManagedProcess:
    """One long-running binary whose stdout and stderr go to a log file."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self._popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            log.write(f"==> {' '.join(self.argv)}\n".encode())
            log.flush()
            self._popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own process group: Ctrl-C in the test terminal must not kill it before
                # the fixture's teardown gets to stop it in order.
                start_new_session=True,
            )

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    def running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def stop(self, grace_s: float = 30.0) -> None:
        """SIGTERM, wait up to `grace_s`, then SIGKILL."""
        popen, self._popen = self._popen, None
        if popen is None or popen.poll() is not None:
            return
        popen.send_signal(signal.SIGTERM)
        try:
            popen.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()

    def kill(self) -> None:
        """SIGKILL at once: no shutdown of any kind, as when a node dies."""
        popen, self._popen = self._popen, None
        if popen is not None and popen.poll() is None:
            popen.kill()
            popen.wait()

    def exit_code(self) -> int | None:
        return self._popen.poll() if self._popen is not None else None

    def log_tail(self, lines: int = 40) -> str:
        try:
            content = self.log_path.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(content[-lines:])

    def wait_until(self, ready: Callable[[], bool], timeout_s: float, what: str) -> None:
        """Polls `ready` until it holds; fails early if the process dies meanwhile."""
        deadline = time.monotonic() + timeout_s
        while True:
            if not self.running():
                raise ProcessExitedError(f"{self.name} exited while waiting for {what}")
            with contextlib.suppress(OSError):
                if ready():
                    return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{self.name}: {what} not reached within {timeout_s:.0f} s")
            time.sleep(POLL_INTERVAL_S)
