"""What each SchedulerMetrics method records, read back through the registry."""

from __future__ import annotations

from collections.abc import Callable

import prometheus_client
import pytest
from prometheus_client import CollectorRegistry

from scheduler.observability import SchedulerMetrics
from scheduler.observability import attempts_label


def _value(metrics: SchedulerMetrics, sample: str, /, **labels: str) -> float | None:
    """A sample straight from the registry (bucket bounds in prometheus_client's "2.0" form)."""
    return metrics.registry.get_sample_value(sample, labels)


@pytest.fixture
def metrics() -> SchedulerMetrics:
    return SchedulerMetrics()


def test_schedule_attempt_counts_and_times_by_result_and_profile(
    metrics: SchedulerMetrics,
) -> None:
    metrics.schedule_attempt("scheduled", "default-scheduler", 0.003)
    metrics.schedule_attempt("scheduled", "default-scheduler", 0.005)
    metrics.schedule_attempt("unschedulable", "gpu", 0.5)

    total = "scheduler_schedule_attempts_total"
    assert _value(metrics, total, result="scheduled", profile="default-scheduler") == 2
    assert _value(metrics, total, result="unschedulable", profile="gpu") == 1
    assert _value(metrics, total, result="error", profile="gpu") is None

    duration = "scheduler_scheduling_attempt_duration_seconds"
    scheduled = {"result": "scheduled", "profile": "default-scheduler"}
    assert _value(metrics, duration + "_count", **scheduled) == 2
    assert _value(metrics, duration + "_sum", **scheduled) == pytest.approx(0.008)
    # 3ms and 5ms: neither fits the 2ms bucket, only the first fits 4ms.
    assert _value(metrics, duration + "_bucket", le="0.002", **scheduled) == 0
    assert _value(metrics, duration + "_bucket", le="0.004", **scheduled) == 1
    assert _value(metrics, duration + "_bucket", le="0.008", **scheduled) == 2


@pytest.mark.parametrize(
    ("attempts", "label"),
    [(1, "1"), (2, "2"), (14, "14"), (15, "15+"), (16, "15+"), (100, "15+")],
    ids=str,
)
def test_attempts_label_caps_at_fifteen(attempts: int, label: str) -> None:
    assert attempts_label(attempts) == label


def test_pod_scheduled_records_attempts_and_sli_by_attempt_label(
    metrics: SchedulerMetrics,
) -> None:
    metrics.pod_scheduled(3, 0.25)
    metrics.pod_scheduled(15, 30.0)
    metrics.pod_scheduled(40, 60.0)

    attempts = "scheduler_pod_scheduling_attempts"
    assert _value(metrics, attempts + "_bucket", le="2.0") == 0
    assert _value(metrics, attempts + "_bucket", le="4.0") == 1
    assert _value(metrics, attempts + "_bucket", le="16.0") == 2
    assert _value(metrics, attempts + "_count") == 3

    sli = "scheduler_pod_scheduling_sli_duration_seconds"
    assert _value(metrics, sli + "_count", attempts="3") == 1
    assert _value(metrics, sli + "_sum", attempts="3") == pytest.approx(0.25)
    assert _value(metrics, sli + "_count", attempts="15+") == 2
    assert _value(metrics, sli + "_sum", attempts="15+") == pytest.approx(90.0)
    assert _value(metrics, sli + "_count", attempts="40") is None


Record = Callable[[SchedulerMetrics], None]


@pytest.mark.parametrize(
    ("record", "sample", "labels", "expected"),
    [
        pytest.param(
            lambda m: m.scheduling_algorithm_duration(0.02),
            "scheduler_scheduling_algorithm_duration_seconds_sum",
            {},
            0.02,
            id="scheduling_algorithm_duration",
        ),
        pytest.param(
            lambda m: m.extension_point_duration("Filter", "Success", "p", 0.001),
            "scheduler_framework_extension_point_duration_seconds_count",
            {"extension_point": "Filter", "status": "Success", "profile": "p"},
            1,
            id="extension_point_duration",
        ),
        pytest.param(
            lambda m: m.plugin_execution_duration("TaintToleration", "Score", "Success", 2e-5),
            "scheduler_plugin_execution_duration_seconds_sum",
            {"plugin": "TaintToleration", "extension_point": "Score", "status": "Success"},
            2e-5,
            id="plugin_execution_duration",
        ),
        pytest.param(
            lambda m: m.plugin_evaluation("NodeAffinity", "Filter", "p", count=500),
            "scheduler_plugin_evaluation_total",
            {"plugin": "NodeAffinity", "extension_point": "Filter", "profile": "p"},
            500,
            id="plugin_evaluation",
        ),
        pytest.param(
            lambda m: m.permit_wait("Unschedulable", 1.5),
            "scheduler_permit_wait_duration_seconds_sum",
            {"result": "Unschedulable"},
            1.5,
            id="permit_wait",
        ),
        pytest.param(
            lambda m: m.queue_incoming("backoff", "ScheduleAttemptFailure"),
            "scheduler_queue_incoming_pods_total",
            {"queue": "backoff", "event": "ScheduleAttemptFailure"},
            1,
            id="queue_incoming",
        ),
        pytest.param(
            lambda m: m.pod_incoming("active", "NodeAdd"),
            "scheduler_queue_incoming_pods_total",
            {"queue": "active", "event": "NodeAdd"},
            1,
            id="pod_incoming",
        ),
        pytest.param(
            lambda m: m.event_handling_duration("AssignedPodDelete", 0.0003),
            "scheduler_event_handling_duration_seconds_sum",
            {"event": "AssignedPodDelete"},
            0.0003,
            id="event_handling_duration",
        ),
        pytest.param(
            lambda m: m.queueing_hint_duration("NodeAffinity", "NodeAdd", "QueueSkip", 4e-5),
            "scheduler_queueing_hint_execution_duration_seconds_sum",
            {"plugin": "NodeAffinity", "event": "NodeAdd", "hint": "QueueSkip"},
            4e-5,
            id="queueing_hint_duration",
        ),
        pytest.param(
            lambda m: m.preemption_attempt(),
            "scheduler_preemption_attempts_total",
            {},
            1,
            id="preemption_attempt",
        ),
        pytest.param(
            lambda m: m.preemption_victims(5),
            "scheduler_preemption_victims_sum",
            {},
            5,
            id="preemption_victims",
        ),
        pytest.param(
            lambda m: m.preemption_goroutine("error", 0.7),
            "scheduler_preemption_goroutines_execution_total",
            {"result": "error"},
            1,
            id="preemption_goroutine-count",
        ),
        pytest.param(
            lambda m: m.preemption_goroutine("error", 0.7),
            "scheduler_preemption_goroutines_duration_seconds_sum",
            {"result": "error"},
            0.7,
            id="preemption_goroutine-duration",
        ),
        pytest.param(
            lambda m: m.volume_binder_cache_request("find"),
            "scheduler_volume_binder_cache_requests_total",
            {"operation": "find"},
            1,
            id="volume_binder_cache_request",
        ),
        pytest.param(
            lambda m: m.volume_scheduling_stage_error("bind"),
            "scheduler_volume_scheduling_stage_error_total",
            {"operation": "bind"},
            1,
            id="volume_scheduling_stage_error",
        ),
    ],
)
def test_each_method_records_into_its_family(
    metrics: SchedulerMetrics,
    record: Record,
    sample: str,
    labels: dict[str, str],
    expected: float,
) -> None:
    record(metrics)
    assert _value(metrics, sample, **labels) == pytest.approx(expected)


def test_goroutines_gauge_follows_starts_and_ends(metrics: SchedulerMetrics) -> None:
    metrics.goroutines("binding", 1)
    metrics.goroutines("binding", 1)
    metrics.goroutines("prioritizing_extender", 1)
    metrics.goroutines("binding", -1)

    assert _value(metrics, "scheduler_goroutines", operation="binding") == 1
    assert _value(metrics, "scheduler_goroutines", operation="prioritizing_extender") == 1


def test_leader_status_is_one_only_while_leading(metrics: SchedulerMetrics) -> None:
    metrics.leader_status("kube-scheduler", True)
    assert _value(metrics, "leader_election_master_status", name="kube-scheduler") == 1
    metrics.leader_status("kube-scheduler", False)
    assert _value(metrics, "leader_election_master_status", name="kube-scheduler") == 0


def test_pod_incoming_is_the_queue_observer_spelling_of_queue_incoming() -> None:
    assert SchedulerMetrics.pod_incoming is SchedulerMetrics.queue_incoming


def test_two_instances_keep_separate_counts() -> None:
    first, second = SchedulerMetrics(), SchedulerMetrics()
    first.schedule_attempt("scheduled", "p", 0.01)
    first.schedule_attempt("scheduled", "p", 0.01)
    second.schedule_attempt("scheduled", "p", 0.01)

    total = "scheduler_schedule_attempts_total"
    assert _value(first, total, result="scheduled", profile="p") == 2
    assert _value(second, total, result="scheduled", profile="p") == 1


def test_uses_the_injected_registry_and_never_the_global_one() -> None:
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)
    metrics.preemption_attempt()

    assert metrics.registry is registry
    assert registry.get_sample_value("scheduler_preemption_attempts_total") == 1
    assert (
        prometheus_client.REGISTRY.get_sample_value("scheduler_preemption_attempts_total") is None
    )
    # The same registry cannot hold the families twice: they really were registered there.
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        SchedulerMetrics(registry)


def test_render_reflects_recorded_values(metrics: SchedulerMetrics) -> None:
    metrics.queue_incoming("active", "PodAdd")
    lines = metrics.render().decode().splitlines()
    assert 'scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"} 1.0' in lines


def test_reset_drops_labelled_series_until_they_are_observed_again(
    metrics: SchedulerMetrics,
) -> None:
    metrics.schedule_attempt("scheduled", "default-scheduler", 0.003)
    metrics.schedule_attempt("scheduled", "default-scheduler", 0.003)
    metrics.scheduling_algorithm_duration(0.001)
    metrics.rest_client.request("GET", "10.0.0.1:6443", 200, 0.01, sent=10)
    metrics.preemption_attempt()
    total = "scheduler_schedule_attempts_total"

    metrics.reset()

    assert _value(metrics, total, result="scheduled", profile="default-scheduler") is None
    client = {"code": "200", "method": "GET", "host": "10.0.0.1:6443"}
    assert _value(metrics, "rest_client_requests_total", **client) is None
    # A counter without labels starts again from 0; a histogram without labels has no Reset
    # in upstream's registry either.
    assert _value(metrics, "scheduler_preemption_attempts_total") == 0
    assert _value(metrics, "scheduler_scheduling_algorithm_duration_seconds_count") == 1
    metrics.schedule_attempt("scheduled", "default-scheduler", 0.003)
    assert _value(metrics, total, result="scheduled", profile="default-scheduler") == 1
    line = 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0'
    assert line in metrics.render().decode().splitlines()
