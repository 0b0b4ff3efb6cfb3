"""The Prometheus source: parsing answers, merging them, ageing values out, saying so."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from plugins.helpers.prometheus import PrometheusSource
from plugins.helpers.prometheus import PrometheusSourceArgs
from plugins.helpers.prometheus import QueryError
from plugins.helpers.prometheus import node_of
from plugins.helpers.prometheus import per_node_values
from scheduler.observability import SchedulerMetrics
from scheduler.testing import FakeClock
from scheduler.testing import build_table
from scheduler.testing import make_node
from tests.conftest import CapturedLogs
from tests.plugins.background_handles import RecordingHandle
from tests.plugins.reported_metrics import Reporter
from tests.plugins.reported_metrics import reported


def vector(*samples: tuple[dict[str, str], str]) -> dict[str, object]:
    return {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [{"metric": m, "value": [1700000000.0, v]} for m, v in samples],
        },
    }


@pytest.mark.parametrize(
    ("value", "node"),
    [
        ("node-a", "node-a"),
        ("node-a:9100", "node-a"),
        ("10.0.0.7:9100", "10.0.0.7"),
        ("[fd00::7]:9100", "fd00::7"),
        ("fd00::7", "fd00::7"),
    ],
)
def test_node_of_drops_the_port(value: str, node: str) -> None:
    assert node_of({"instance": value}, "instance") == node


def test_answers_by_node_keep_the_largest_duplicate_and_skip_non_finite() -> None:
    payload = vector(
        ({"Hostname": "g1", "gpu": "0"}, "20"),
        ({"Hostname": "g1", "gpu": "1"}, "80"),
        ({"Hostname": "g2"}, "NaN"),
        ({"other": "x"}, "5"),
        ({"Hostname": "g3"}, "7.5"),
    )
    assert per_node_values(payload, "Hostname") == {"g1": 80.0, "g3": 7.5}


def test_error_answers_and_other_result_types_raise() -> None:
    with pytest.raises(QueryError, match="bad_data: parse error"):
        per_node_values({"status": "error", "errorType": "bad_data", "error": "parse error"}, "i")
    with pytest.raises(QueryError, match="instant vector"):
        per_node_values({"status": "success", "data": {"resultType": "matrix"}}, "i")


def test_settings_are_checked_against_each_other() -> None:
    with pytest.raises(ValidationError, match="maxStalenessSeconds \\(5\\) must be at least"):
        PrometheusSourceArgs.model_validate({"intervalSeconds": 10, "maxStalenessSeconds": 5})
    with pytest.raises(ValidationError, match="timeoutSeconds \\(20\\) must not exceed"):
        PrometheusSourceArgs.model_validate({"intervalSeconds": 10, "timeoutSeconds": 20})
    with pytest.raises(ValidationError, match="retrys"):
        PrometheusSourceArgs.model_validate({"retrys": 1})
    with pytest.raises(ValidationError, match="address"):
        PrometheusSourceArgs.model_validate({"address": "prometheus:9090"})


def stale_gauge(source: Reporter, plugin: str) -> float | None:
    name = "kube_pyscheduler_plugin_prometheus_stale"
    return reported(source, name, profile="default-scheduler", plugin=plugin)


def test_values_age_out_and_staleness_is_reported_once_each_way(
    captured_logs: CapturedLogs,
) -> None:
    clock = FakeClock()
    handle = RecordingHandle(clock=clock)
    settings = PrometheusSourceArgs(interval_seconds=5, max_staleness_seconds=20)
    source = PrometheusSource(settings, {"q": "up"}, handle, "SourceUnderTest")
    source.start()
    assert [name for name, _ in handle.background] == ["SourceUnderTest-prometheus"]

    assert source.check_staleness()  # nothing fetched yet
    assert stale_gauge(source, "SourceUnderTest") == 1
    source.merge("q", {"a": 10.0, "b": 20.0}, clock.now())
    assert not source.check_staleness()
    assert stale_gauge(source, "SourceUnderTest") == 0
    clock.advance(15)
    source.merge("q", {"a": 11.0}, clock.now())  # b missing from this answer: kept, ageing
    clock.advance(10)
    now = clock.now()
    assert source.value("q", "a", now) == (11.0, now - 10)
    assert source.value("q", "b", now) is None  # 25 s old
    table = build_table([make_node("a").obj(), make_node("b").obj(), make_node("c").obj()])
    values, observed = source.row_values("q", table, np.asarray([2, 0, 1]), now)
    assert math.isnan(values[0]) and values[1] == 11.0 and math.isnan(values[2])
    assert observed[1] == now - 10 and observed[0] == -math.inf
    clock.advance(11)
    assert source.check_staleness()
    assert source.check_staleness()
    assert stale_gauge(source, "SourceUnderTest") == 1
    stale = (
        "No Prometheus data fresher than maxStalenessSeconds; scoring every node neutrally "
        "until it returns"
    )
    said = [
        (r["level"], r["msg"], r["plugin"], r["profile"], r.get("maxStalenessSeconds"))
        for r in captured_logs.records()
    ]
    assert said == [
        ("warning", stale, "SourceUnderTest", "default-scheduler", 20),
        ("info", "Fresh Prometheus data again", "SourceUnderTest", "default-scheduler", None),
        ("warning", stale, "SourceUnderTest", "default-scheduler", 20),
    ]


def test_the_families_are_served_on_the_schedulers_metrics() -> None:
    source = PrometheusSource(
        PrometheusSourceArgs(), {"q": "up"}, RecordingHandle(clock=FakeClock()), "Served"
    )
    source.check_staleness()
    metrics = SchedulerMetrics()
    metrics.add_plugin_samples_source(source.metric_samples)
    body = metrics.render().decode()
    assert (
        'kube_pyscheduler_plugin_prometheus_stale{plugin="Served",profile="default-scheduler"} 1.0'
        in body
    )
    assert "# TYPE kube_pyscheduler_plugin_prometheus_queries_total counter" in body
