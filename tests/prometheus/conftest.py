"""One Prometheus for these tests, scraping one exporter; tests set what it exports."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.prometheus.server import CPU_NODES
from tests.prometheus.server import GPUS
from tests.prometheus.server import STEADY_CPU
from tests.prometheus.server import STEADY_MEMORY
from tests.prometheus.server import Exporter
from tests.prometheus.server import PrometheusServer


@pytest.fixture(scope="session")
def exporter() -> Iterator[Exporter]:
    exporter = Exporter()
    exporter.set_cpu(**CPU_NODES, **STEADY_CPU)
    exporter.memory.update(STEADY_MEMORY)
    exporter.gpus.update(GPUS)
    exporter.start()
    yield exporter
    exporter.stop()


@pytest.fixture(scope="session")
def prometheus(exporter: Exporter, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = PrometheusServer(Path(tmp_path_factory.mktemp("prometheus")), exporter.port)
    try:
        # Two scrapes at least, so rate() has its two samples.
        server.wait_for('rate(node_cpu_seconds_total{mode="idle"}[2s])', 5)
        server.wait_for("DCGM_FI_DEV_GPU_UTIL", 3)
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def running_exporter(exporter: Exporter) -> Iterator[Exporter]:
    """The exporter, serving again after the test whatever the test did to it."""
    yield exporter
    if not exporter.running:
        exporter.start()
