"""A real Prometheus (Debian's package) on loopback, scraping an exporter the test controls."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

SCRAPE_INTERVAL = 0.5
GIB = 1024**3

# What the session's exporter serves at first (percent): CPU of n*, steady CPU and memory of m*,
# (utilisation, free memory) of each GPU node g*.
CPU_NODES = {"n0": 10.0, "n1": 35.0, "n2": 80.0}
STEADY_CPU = {"m0": 20.0, "m1": 60.0}
STEADY_MEMORY = {"m0": 30.0, "m1": 70.0}
GPUS = {"g0": (70.0, 20.0), "g1": (10.0, 90.0), "g2": (40.0, 50.0)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Exporter:
    """Serves node_exporter- and dcgm-exporter-shaped series for nodes the test names.

    CPU is exposed the way node_exporter does it, as an idle-seconds counter, advanced at each
    scrape by (1 - utilisation) x the real time elapsed, so `rate()` reads the utilisation back.
    `honor_labels` in the scrape config keeps each series' own `instance` / `Hostname`.
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.cpu: dict[str, float] = {}
        self.memory: dict[str, float] = {}
        self.gpus: dict[str, tuple[float, float]] = {}  # utilisation %, free memory %
        self._idle: dict[str, float] = {}
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def set_cpu(self, **percent: float) -> None:
        with self._lock:
            self._advance()
            self.cpu.update(percent)

    def _advance(self) -> None:
        now = time.monotonic()
        elapsed, self._last = now - self._last, now
        for node, percent in self.cpu.items():
            self._idle[node] = self._idle.get(node, 0.0) + (1 - percent / 100) * elapsed

    def render(self) -> str:
        with self._lock:
            self._advance()
            lines = []
            for node in self.cpu:
                labels = f'instance="{node}:9100",cpu="0"'
                lines.append(f'node_cpu_seconds_total{{{labels},mode="idle"}} {self._idle[node]}')
            for node, percent in self.memory.items():
                lines.append(f'node_memory_MemTotal_bytes{{instance="{node}:9100"}} {8 * GIB}')
                available = 8 * GIB * (1 - percent / 100)
                lines.append(
                    f'node_memory_MemAvailable_bytes{{instance="{node}:9100"}} {available}'
                )
            for host, (util, free) in self.gpus.items():
                labels = f'gpu="0",UUID="GPU-{host}",device="nvidia0",Hostname="{host}"'
                lines.append(f"DCGM_FI_DEV_GPU_UTIL{{{labels}}} {util}")
                lines.append(f"DCGM_FI_DEV_FB_FREE{{{labels}}} {40960 * free / 100}")
                lines.append(f"DCGM_FI_DEV_FB_USED{{{labels}}} {40960 * (100 - free) / 100}")
            return "\n".join(lines) + "\n"

    def start(self) -> None:
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = exporter.render().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                # The scraper may go away mid-answer (a test stopped Prometheus).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def running(self) -> bool:
        return self._server is not None


class PrometheusServer:
    def __init__(self, workdir: Path, exporter_port: int) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            raise RuntimeError(
                "the 'prometheus' binary is not on PATH; install Debian's package "
                "(apt-get install prometheus), as .ci/run does"
            )
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = workdir / "prometheus.yml"
        config.write_text(
            "global:\n"
            f"  scrape_interval: {int(SCRAPE_INTERVAL * 1000)}ms\n"
            f"  scrape_timeout: {int(SCRAPE_INTERVAL * 800)}ms\n"
            "scrape_configs:\n"
            "  - job_name: exporter\n"
            "    honor_labels: true\n"
            "    static_configs:\n"
            f"      - targets: ['127.0.0.1:{exporter_port}']\n"
        )
        self._log = (workdir / "prometheus.log").open("wb")
        self._process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def query(self, promql: str) -> list[dict[str, Any]]:
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=2) as response:
            result: list[dict[str, Any]] = json.load(response)["data"]["result"]
            return result

    def wait_for(self, promql: str, count: int, deadline_seconds: float = 30.0) -> None:
        """Until `promql` returns `count` series (Prometheus up, targets scraped twice)."""
        deadline = time.monotonic() + deadline_seconds
        last: object = None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self._process.returncode}")
            try:
                if len(self.query(promql)) == count:
                    return
            except OSError as exc:
                last = exc
            time.sleep(0.1)
        raise TimeoutError(f"prometheus never returned {count} series for {promql}: {last}")

    @property
    def pid(self) -> int:
        return self._process.pid

    def stop(self) -> None:
        """Stop the process (again: a no-op)."""
        if self._process.poll() is not None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if not self._log.closed:
            self._log.close()
