"""LoadAware against a real Prometheus: scores follow the exported load, and when the exporter
goes away the plugin keeps its last values until maxStaleness, then takes no part."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from plugins.helpers.prometheus import PrometheusSource
from plugins.helpers.prometheus import PrometheusSourceArgs
from plugins.load_aware import LoadAware
from plugins.load_aware import LoadAwareArgs
from plugins.load_aware.args import CPU_STD_DEV
from plugins.load_aware.args import CPU_UTILIZATION
from plugins.load_aware.args import MEMORY_STD_DEV
from plugins.load_aware.args import MEMORY_UTILIZATION
from scheduler.framework import CycleState
from scheduler.framework import SystemClock
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import score_batch
from tests.plugins.background_handles import RecordingHandle
from tests.plugins.background_handles import RunningHandle
from tests.plugins.reported_metrics import Reporter
from tests.plugins.reported_metrics import reported
from tests.prometheus.server import CPU_NODES
from tests.prometheus.server import SCRAPE_INTERVAL
from tests.prometheus.server import STEADY_CPU
from tests.prometheus.server import STEADY_MEMORY
from tests.prometheus.server import Exporter
from tests.prometheus.server import free_port

INTERVAL = 0.5
MAX_STALENESS = 3.0
# A short rate() window, so a change of load shows within seconds.
FAST_CPU = '100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[2s])))'


async def poll(condition: object, what: str, deadline_seconds: float = 20.0) -> float:
    """Seconds until `condition()` holds, checked every 50 ms; fails past the deadline."""
    assert callable(condition)
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > deadline_seconds:
            raise AssertionError(f"{what}: not within {deadline_seconds} s")
        await asyncio.sleep(0.05)
    return time.monotonic() - started


def near(scores: list[int], expected: list[int]) -> bool:
    """Within 3 points each: rate() over real scrape times is close, not exact."""
    return len(scores) == len(expected) and all(
        abs(s - e) <= 3 for s, e in zip(scores, expected, strict=True)
    )


def stale_gauge(plugin: Reporter, profile: str) -> float | None:
    return reported(
        plugin, "kube_pyscheduler_plugin_prometheus_stale", profile=profile, plugin="LoadAware"
    )


async def test_scores_follow_the_load_and_turn_neutral_when_the_exporter_stops(
    prometheus: str, running_exporter: Exporter
) -> None:
    table = build_table([make_node(n).capacity(cpu="4", memory="8Gi").obj() for n in CPU_NODES])
    handle = RunningHandle(table, clock=SystemClock())
    args = LoadAwareArgs.model_validate(
        {
            "prometheus": {
                "address": prometheus,
                "intervalSeconds": INTERVAL,
                "timeoutSeconds": INTERVAL,
                "retries": 1,
                "maxStalenessSeconds": MAX_STALENESS,
            },
            "queries": {"cpuUtilization": FAST_CPU},
        }
    )
    plugin = LoadAware(args, handle)
    # 100m requested, x 1.5, of 4 cores: 3.75 % on top of the measured load.
    pod = make_pod("p").req(cpu="100m").obj()

    def scores() -> list[int]:
        state = CycleState()
        if plugin.pre_score(state, pod, table, table.all_rows()).is_skip:
            return []
        return score_batch(plugin, state, pod, table)

    try:
        # 10 %, 35 %, 80 % measured: n1 sits just under the 40 % target and wins.
        expected = [61, 98, 11]
        await poll(lambda: near(scores(), expected), "scores of the first load")
        running_exporter.set_cpu(n0=35.0, n1=80.0)
        # Now n0 is the one just under the target, and n1 is past it.
        await poll(lambda: near(scores(), [98, 11, 11]), "scores of the changed load")
        assert stale_gauge(plugin, "default-scheduler") == 0

        running_exporter.stop()
        neutral_after = await poll(lambda: scores() == [], "neutral scoring")
        # The last values served until they were maxStaleness old; then nothing. The newest
        # answer carrying them came at most one refresh and one scrape after the stop.
        assert neutral_after >= MAX_STALENESS - INTERVAL - SCRAPE_INTERVAL
        assert neutral_after <= MAX_STALENESS + INTERVAL + SCRAPE_INTERVAL + 1.0
        assert stale_gauge(plugin, "default-scheduler") == 1
    finally:
        await handle.stop()


def query_count(source: Reporter, plugin: str, result: str) -> float:
    value = reported(
        source,
        "kube_pyscheduler_plugin_prometheus_queries_total",
        profile="default-scheduler",
        plugin=plugin,
        result=result,
    )
    return value or 0.0


async def test_default_node_exporter_queries_read_cpu_and_memory(
    prometheus: str, running_exporter: Exporter
) -> None:
    settings = PrometheusSourceArgs(address=prometheus, interval_seconds=1, timeout_seconds=1)
    queries = {
        "cpu": CPU_UTILIZATION,
        "cpuStd": CPU_STD_DEV,
        "memory": MEMORY_UTILIZATION,
        "memoryStd": MEMORY_STD_DEV,
    }
    source = PrometheusSource(settings, queries, RecordingHandle(clock=SystemClock()), "Defaults")
    errors = query_count(source, "Defaults", "error")
    deadline = time.monotonic() + 20
    async with aiohttp.ClientSession() as session:
        # Until both steady nodes are in (the exporter may just have been restarted).
        while True:
            await source.refresh(session)
            now = SystemClock().now()
            if all(source.value(q, n, now) for q in ("cpu", "memory") for n in STEADY_CPU):
                break
            assert time.monotonic() < deadline, "the steady nodes never showed up"
            await asyncio.sleep(0.2)
    assert query_count(source, "Defaults", "error") == errors  # every default query is valid PromQL
    # rate() over 5m reads low until Prometheus holds 5 minutes of samples (it spreads the
    # increase over the whole window), so here only the order is checked; the exact CPU
    # reading is the short-window test above.
    cpu = {node: source.value("cpu", node, now) for node in STEADY_CPU}
    assert cpu["m0"] is not None and cpu["m1"] is not None
    assert cpu["m0"][0] < cpu["m1"][0]
    for node, memory in STEADY_MEMORY.items():
        measured = source.value("memory", node, now)
        assert measured is not None and measured[0] == pytest.approx(memory, abs=0.01)


async def test_an_unreachable_prometheus_costs_bounded_retries_and_scores_neutrally() -> None:
    settings = PrometheusSourceArgs(
        address=f"http://127.0.0.1:{free_port()}",
        interval_seconds=1,
        timeout_seconds=0.5,
        retries=2,
    )
    table = build_table([make_node("n0").obj()])
    handle = RecordingHandle(table, clock=SystemClock())
    plugin = LoadAware(LoadAwareArgs(prometheus=settings), handle)
    errors = query_count(plugin, "LoadAware", "error")
    async with aiohttp.ClientSession() as session:
        await plugin.source.refresh(session)
    assert query_count(plugin, "LoadAware", "error") == errors + 3  # one attempt and two retries
    assert plugin.pre_score(CycleState(), make_pod("p").obj(), table, table.all_rows()).is_skip
