"""The Grafana dashboard reads only metrics that the daemon's /metrics really exposes.

Every query (panels and variables) is reduced to the metric names it reads; a daemon started
on the in-memory cluster serves /metrics over HTTPS, and every name must be one of its
families' samples (a histogram's `_bucket`, `_sum`, `_count`, a counter's `_total`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from scheduler.cluster.sim import SimCluster
from scheduler.framework.clock import SystemClock
from tests.app.daemon_on_sim import scheduling_daemon
from tests.app.daemon_on_sim import secure_get
from tests.app.daemon_on_sim import until
from tests.deploy.manifests import DEPLOY_DIR
from tests.deploy.promql_names import metric_names
from tests.deploy.promql_names import template_query_names

DASHBOARD = DEPLOY_DIR / "grafana" / "kube-pyscheduler.json"
SAMPLE_SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_sum", "_count"),
    "gauge": ("",),
}
# What the dashboard is for: each of these must be charted.
REQUIRED = {
    "scheduler_schedule_attempts_total",  # throughput and attempts by result
    "scheduler_framework_extension_point_duration_seconds_bucket",
    "scheduler_plugin_execution_duration_seconds_bucket",
    "scheduler_pending_pods",  # queue sizes
    "scheduler_unschedulable_pods",  # pending pods by reason
    "scheduler_preemption_attempts_total",
    "leader_election_master_status",
    "scheduler_unserved_pods",
}


def _load(path: Path) -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return dashboard


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


def _queries(dashboard: dict[str, Any]) -> list[tuple[str, set[str]]]:
    found = [
        (f"panel {panel['title']!r}", metric_names(target["expr"]))
        for panel in _panels(dashboard["panels"])
        for target in panel.get("targets", [])
    ]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            text = query["query"] if isinstance(query, dict) else query
            found.append((f"variable {variable['name']!r}", template_query_names(text)))
    return found


async def _scrape_daemon() -> str:
    daemon = scheduling_daemon("kube-pyscheduler", SimCluster(clock=SystemClock()))
    await daemon.start()
    try:
        await until(daemon._informers_synced)
        status, text = await secure_get(daemon.port, "/metrics")
        assert status == 200
        return text
    finally:
        await daemon.shutdown()


@pytest.fixture(scope="module")
def exposed() -> set[str]:
    text = asyncio.run(_scrape_daemon())
    return {
        family.name + suffix
        for family in text_string_to_metric_families(text)
        for suffix in SAMPLE_SUFFIXES.get(family.type, ("",))
    }


def test_every_query_reads_metrics_that_metrics_exposes(exposed: set[str]) -> None:
    queries = _queries(_load(DASHBOARD))
    assert len(queries) >= 15

    for where, names in queries:
        assert names, f"{where}: no metric name found in its query"
        assert names <= exposed, f"{where}: {sorted(names - exposed)} not on /metrics"
    charted = set().union(*(names for _, names in queries))
    assert sorted(REQUIRED - charted) == []


def test_panels_use_the_dashboard_data_source_and_have_unique_ids() -> None:
    dashboard = _load(DASHBOARD)
    panels = list(_panels(dashboard["panels"]))
    ids = [panel["id"] for panel in panels]

    assert len(ids) == len(set(ids))
    for panel in panels:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
            assert panel["targets"], panel["title"]


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        (
            'histogram_quantile(0.99, sum by (le, plugin) (rate(a_bucket{job=~"$job",x="y"}'
            "[$__rate_interval])))",
            {"a_bucket"},
        ),
        ("sum(rate(b_total[5m])) / ignoring(result) group_left c", {"b_total", "c"}),
        ('max by (name) (d{a="rate(e)"}) > 0 and on(instance) f offset 5m', {"d", "f"}),
        ("label_values(g_total, job)", {"g_total"}),
    ],
)
def test_metric_names_are_found_in_promql(expr: str, names: set[str]) -> None:
    assert template_query_names(expr) == names
