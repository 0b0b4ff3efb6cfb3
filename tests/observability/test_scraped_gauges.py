"""Gauges read from their owners' callbacks when /metrics is scraped."""

from __future__ import annotations

import pytest

from scheduler.observability import SchedulerMetrics
from scheduler.observability.catalog import PENDING_PODS
from scheduler.observability.catalog import SCHEDULE_ATTEMPTS
from scheduler.observability.scraped_gauges import ScrapedGauges


def _value(metrics: SchedulerMetrics, sample: str, /, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(sample, labels)


def test_pending_pods_follow_the_queue_between_scrapes() -> None:
    metrics = SchedulerMetrics()
    queues = {"active": 2, "backoff": 0, "unschedulable": 1, "gated": 0}
    metrics.set_pending_pods_source(lambda: queues)

    assert _value(metrics, "scheduler_pending_pods", queue="active") == 2
    assert _value(metrics, "scheduler_pending_pods", queue="unschedulable") == 1
    queues["active"] = 0
    queues["gated"] = 5
    assert _value(metrics, "scheduler_pending_pods", queue="active") == 0
    assert _value(metrics, "scheduler_pending_pods", queue="gated") == 5
    assert 'scheduler_pending_pods{queue="gated"} 5.0' in metrics.render().decode().splitlines()


def test_sources_are_read_only_when_scraped() -> None:
    metrics = SchedulerMetrics()
    reads: list[int] = []

    def cache_sizes() -> dict[str, int]:
        reads.append(1)
        return {"nodes": 100, "pods": 3000, "assumed_pods": 7}

    metrics.set_cache_size_source(cache_sizes)
    metrics.schedule_attempt("scheduled", "p", 0.01)
    assert reads == []
    metrics.render()
    assert len(reads) == 1
    assert _value(metrics, "scheduler_cache_size", type="assumed_pods") == 7


@pytest.mark.parametrize(
    ("setter", "family", "values", "labels"),
    [
        ("set_cache_size_source", "scheduler_cache_size", {"nodes": 4}, {"type": "nodes"}),
        (
            "set_inflight_events_source",
            "scheduler_inflight_events",
            {"PodPopped": 2},
            {"event": "PodPopped"},
        ),
    ],
    ids=["cache_size", "inflight_events"],
)
def test_one_label_sources(
    setter: str, family: str, values: dict[str, int], labels: dict[str, str]
) -> None:
    metrics = SchedulerMetrics()
    getattr(metrics, setter)(lambda: values)
    assert _value(metrics, family, **labels) == next(iter(values.values()))


def test_unschedulable_pods_by_plugin_and_profile() -> None:
    metrics = SchedulerMetrics()
    metrics.set_unschedulable_pods_source(
        lambda: {("NodeAffinity", "default-scheduler"): 3, ("NodeResourcesFit", "gpu"): 1}
    )
    family = "scheduler_unschedulable_pods"
    assert _value(metrics, family, plugin="NodeAffinity", profile="default-scheduler") == 3
    assert _value(metrics, family, plugin="NodeResourcesFit", profile="gpu") == 1
    assert _value(metrics, family, plugin="NodeAffinity", profile="gpu") is None


def test_removing_a_source_leaves_the_family_empty() -> None:
    metrics = SchedulerMetrics()
    metrics.set_pending_pods_source(lambda: {"active": 1})
    metrics.set_pending_pods_source(None)
    text = metrics.render().decode()
    assert "# TYPE scheduler_pending_pods gauge" in text
    assert "scheduler_pending_pods{" not in text


def test_a_failing_source_spoils_only_its_own_family() -> None:
    metrics = SchedulerMetrics()

    def broken() -> dict[str, int]:
        raise RuntimeError("queue is being rebuilt")

    metrics.set_pending_pods_source(broken)
    metrics.set_cache_size_source(lambda: {"nodes": 2})
    metrics.preemption_attempt()

    text = metrics.render().decode()
    assert "# TYPE scheduler_pending_pods gauge" in text
    assert "scheduler_pending_pods{" not in text
    assert 'scheduler_cache_size{type="nodes"} 2.0' in text
    assert "scheduler_preemption_attempts_total 1.0" in text


def test_collector_accepts_only_scrape_time_gauges() -> None:
    with pytest.raises(ValueError, match="scheduler_schedule_attempts_total"):
        ScrapedGauges([PENDING_PODS, SCHEDULE_ATTEMPTS])


def test_unknown_family_is_rejected() -> None:
    gauges = ScrapedGauges([PENDING_PODS])
    with pytest.raises(KeyError, match="scheduler_cache_size"):
        gauges.set_source("scheduler_cache_size", list)
