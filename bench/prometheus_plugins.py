"""What the Prometheus-fed score plugins cost a scheduling cycle, and whether a slow or dead
Prometheus changes that.

    python -m bench.prometheus_plugins                 # 5,000 nodes
    python -m bench.prometheus_plugins --nodes 500 --cycles 500

Part 1, per plugin (LoadAware in both modes, GPUAware): microseconds of PreScore + Score
(batch form) over every node, with a measurement for every node fed in directly.

Part 2, the cycle against a real Prometheus (Debian's `prometheus` on loopback scraping an
exporter of 5,000 nodes' CPU counters): LoadAware's PreScore + Score per cycle while its
background refresh runs in the same event loop every second, in three phases:
- up: Prometheus answers;
- hung: Prometheus is SIGSTOPped, so each query waits out its timeout and is retried;
- dead: Prometheus is gone, so each query is refused at once and retried.
The values fetched while it was up stay fresh (maxStalenessSeconds is long), so every phase
scores every node; the cycle never awaits the refresh, and p99 shows whether it is disturbed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.plugin_micro import GPU
from bench.plugin_micro import build_cluster
from bench.plugin_micro import time_calls
from plugins.gpu_aware import GPUAware
from plugins.gpu_aware import GPUAwareArgs
from plugins.gpu_aware.plugin import FREE_MEMORY
from plugins.gpu_aware.plugin import GPU_UTIL
from plugins.load_aware import LoadAware
from plugins.load_aware import LoadAwareArgs
from plugins.load_aware.plugin import CPU_STD
from plugins.load_aware.plugin import CPU_UTIL
from plugins.load_aware.plugin import MEMORY_STD
from plugins.load_aware.plugin import MEMORY_UTIL
from scheduler.framework import CycleState
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import SystemClock
from scheduler.testing import make_pod
from tests.plugins.background_handles import RecordingHandle
from tests.plugins.background_handles import RunningHandle
from tests.prometheus.server import Exporter
from tests.prometheus.server import PrometheusServer

QUICK_CPU = '100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[2s])))'


def node_names(table: NodeTable) -> list[str]:
    return [table.node_infos[row].name for row in range(table.size)]


def plugin_costs(table: NodeTable, repeat: int) -> None:
    rng = np.random.default_rng(1)
    names = node_names(table)
    clock = SystemClock()

    def feed(source: Any, queries: list[str]) -> None:
        for query in queries:
            values = rng.uniform(0, 100, len(names))
            source.merge(query, dict(zip(names, values.tolist(), strict=True)), clock.now())

    pod = make_pod("incoming").req(cpu="500m", memory="1Gi").obj()
    gpu_pod = make_pod("incoming-gpu").req(cpu="1", memory="2Gi", **{GPU: 1}).obj()
    print(f"Part 1: {table.size} nodes, PreScore + Score (batch), microseconds per call")
    print(f"  {'':<44} {'best':>9} {'median':>9}")
    cases: list[tuple[str, Any, Pod]] = []
    packing = LoadAware(LoadAwareArgs(), RecordingHandle(table, clock=clock))
    feed(packing.source, [CPU_UTIL])
    cases.append(("LoadAware TargetLoadPacking", packing, pod))
    risk = LoadAware(
        LoadAwareArgs.model_validate({"mode": "LoadVariationRiskBalancing"}),
        RecordingHandle(table, clock=clock),
    )
    feed(risk.source, [CPU_UTIL, CPU_STD, MEMORY_UTIL, MEMORY_STD])
    cases.append(("LoadAware LoadVariationRiskBalancing", risk, pod))
    gpu = GPUAware(GPUAwareArgs(), RecordingHandle(table, clock=clock))
    feed(gpu.source, [GPU_UTIL, FREE_MEMORY])
    cases.append(("GPUAware Spread (GPU pod)", gpu, gpu_pod))
    cases.append(("GPUAware (pod without GPUs: skipped)", gpu, pod))
    for label, plugin, incoming in cases:
        best, median = time_calls(*calls(plugin, incoming, table), repeat)
        print(f"  {label:<44} {best:9.1f} {median:9.1f}")


def calls(
    plugin: Any, pod: Pod, table: NodeTable
) -> tuple[Callable[[CycleState], Any], Callable[[CycleState], Any]]:
    rows = table.all_rows()

    def pre_score(state: CycleState) -> Any:
        if plugin.pre_score(state, pod, table, rows).is_skip:
            state.skip_score_plugins.add(plugin.name)

    def score(state: CycleState) -> Any:
        # Score runs only where PreScore did not skip, as in the scheduler.
        if plugin.name not in state.skip_score_plugins:
            return plugin.score_nodes(state, pod, table, rows)
        return None

    return pre_score, score


async def cycles(plugin: LoadAware, table: NodeTable, pod: Pod, count: int) -> list[float]:
    """Seconds of each cycle's PreScore + Score, yielding to the loop between cycles as the
    scheduler does (so the refresh runs alongside)."""
    rows = table.all_rows()
    spent = []
    for _ in range(count):
        started = time.perf_counter()
        state = CycleState()
        assert plugin.pre_score(state, pod, table, rows).is_success, "data went stale"
        plugin.score_nodes(state, pod, table, rows)
        spent.append(time.perf_counter() - started)
        await asyncio.sleep(0.001)
    return spent


def summary(label: str, spent: list[float]) -> float:
    ordered = sorted(spent)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(
        f"  {label:<8} p50 {statistics.median(ordered) * 1e3:7.3f} ms   "
        f"p99 {p99 * 1e3:7.3f} ms   max {ordered[-1] * 1e3:7.3f} ms"
    )
    return p99


async def cycle_with_prometheus(table: NodeTable, count: int) -> None:
    names = node_names(table)
    exporter = Exporter()
    exporter.set_cpu(**{name: float(i % 90) for i, name in enumerate(names)})
    exporter.start()
    server = PrometheusServer(Path(tempfile.mkdtemp(prefix="bench-prometheus-")), exporter.port)
    handle = RunningHandle(table, clock=SystemClock())
    try:
        server.wait_for('rate(node_cpu_seconds_total{mode="idle"}[2s])', len(names), 60)
        args = LoadAwareArgs.model_validate(
            {
                "prometheus": {
                    "address": server.url,
                    "intervalSeconds": 1,
                    "timeoutSeconds": 1,
                    "retries": 2,
                    "maxStalenessSeconds": 3600,
                },
                "queries": {"cpuUtilization": QUICK_CPU},
            }
        )
        plugin = LoadAware(args, handle)
        pod = make_pod("incoming").req(cpu="500m").obj()
        deadline = time.monotonic() + 30
        while plugin.source.check_staleness():
            assert time.monotonic() < deadline, "no data from Prometheus"
            await asyncio.sleep(0.1)
        print(f"Part 2: LoadAware PreScore + Score per cycle, {table.size} nodes, {count} cycles")
        up = summary("up", await cycles(plugin, table, pod, count))
        pid = server.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            hung = summary("hung", await cycles(plugin, table, pod, count))
        finally:
            os.kill(pid, signal.SIGCONT)
        server.stop()
        dead = summary("dead", await cycles(plugin, table, pod, count))
        print(f"  p99 hung / up = {hung / up:.2f}, dead / up = {dead / up:.2f}")
    finally:
        await handle.stop()
        server.stop()
        exporter.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=200, help="calls per round in part 1")
    parser.add_argument("--cycles", type=int, default=1000, help="cycles per phase in part 2")
    options = parser.parse_args()
    table = build_cluster(options.nodes, seed=1)
    plugin_costs(table, options.repeat)
    asyncio.run(cycle_with_prometheus(table, options.cycles))


if __name__ == "__main__":
    main()
