"""What /metrics exposes, checked against kube-scheduler's metric table.

The expected rows are transcribed from reference/kube-scheduler.md section 7 (names, types,
labels, Exp(start, factor, count) buckets), not derived from the code under test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from scheduler.observability import SchedulerMetrics


@dataclass(frozen=True)
class Row:
    name: str
    kind: str
    labels: frozenset[str]
    buckets: tuple[float, float, int] | None = None


def _row(
    name: str, kind: str, labels: str = "", buckets: tuple[float, float, int] | None = None
) -> Row:
    return Row(name, kind, frozenset(labels.split()), buckets)


REFERENCE = [
    _row("scheduler_schedule_attempts_total", "counter", "result profile"),
    _row(
        "scheduler_scheduling_attempt_duration_seconds",
        "histogram",
        "result profile",
        (0.001, 2, 15),
    ),
    _row("scheduler_scheduling_algorithm_duration_seconds", "histogram", "", (0.001, 2, 15)),
    _row("scheduler_pending_pods", "gauge", "queue"),
    _row("scheduler_queue_incoming_pods_total", "counter", "queue event"),
    _row("scheduler_preemption_attempts_total", "counter"),
    _row("scheduler_preemption_victims", "histogram", "", (1, 2, 7)),
    _row("scheduler_pod_scheduling_attempts", "histogram", "", (1, 2, 5)),
    _row("scheduler_pod_scheduling_sli_duration_seconds", "histogram", "attempts", (0.01, 2, 20)),
    _row(
        "scheduler_framework_extension_point_duration_seconds",
        "histogram",
        "extension_point status profile",
        (0.0001, 2, 12),
    ),
    _row(
        "scheduler_plugin_execution_duration_seconds",
        "histogram",
        "plugin extension_point status",
        (0.00001, 1.5, 20),
    ),
    _row("scheduler_plugin_evaluation_total", "counter", "plugin extension_point profile"),
    _row("scheduler_unschedulable_pods", "gauge", "plugin profile"),
    _row("scheduler_goroutines", "gauge", "operation"),
    _row("scheduler_permit_wait_duration_seconds", "histogram", "result", (0.001, 2, 15)),
    # The table's scheduler_scheduler_cache_size was removed in v1.34 in favour of this name.
    _row("scheduler_cache_size", "gauge", "type"),
    _row("scheduler_event_handling_duration_seconds", "histogram", "event", (0.0001, 2, 12)),
    _row(
        "scheduler_queueing_hint_execution_duration_seconds",
        "histogram",
        "plugin event hint",
        (0.00001, 1.5, 20),
    ),
    _row("scheduler_inflight_events", "gauge", "event"),
    # Buckets marked "verify" in the table; upstream's metrics.go uses these.
    _row("scheduler_preemption_goroutines_duration_seconds", "histogram", "result", (0.01, 2, 20)),
    _row("scheduler_preemption_goroutines_execution_total", "counter", "result"),
    _row("scheduler_volume_binder_cache_requests_total", "counter", "operation"),
    _row("scheduler_volume_scheduling_stage_error_total", "counter", "operation"),
    # DynamicResources' waits for device binding conditions (metrics.go, buckets 0.1 x2 14).
    _row("scheduler_dra_bindingconditions_allocations_total", "counter", "profile driver status"),
    _row(
        "scheduler_dra_bindingconditions_wait_duration_seconds",
        "histogram",
        "profile driver status",
        (0.1, 2, 14),
    ),
    # PreBind's creations of claims for extended resources DeviceClasses provide.
    _row("scheduler_resourceclaim_creates_total", "counter", "status"),
    # Pods bound after the leftover flush, and opportunistic batching (metrics.go: the two
    # duration families start at 10us, factor 2, 12 buckets).
    _row("scheduler_pod_scheduled_after_flush_total", "counter"),
    _row("scheduler_batch_attempts_total", "counter", "profile result"),
    _row("scheduler_batch_cache_flushed_total", "counter", "profile reason"),
    _row(
        "scheduler_get_node_hint_duration_seconds",
        "histogram",
        "hinted profile",
        (0.00001, 2, 12),
    ),
    _row(
        "scheduler_store_schedule_results_duration_seconds",
        "histogram",
        "profile",
        (0.00001, 2, 12),
    ),
    _row("leader_election_master_status", "gauge", "name"),
    _row("leader_election_slowpath_total", "counter", "name"),
    # Reported by the Coscheduling and CapacityScheduling plugins (not upstream families).
    _row("scheduler_podgroups_waiting_at_permit", "gauge", "profile"),
    _row("scheduler_podgroup_schedule_attempts_total", "counter", "profile result"),
    _row("scheduler_elasticquota_used", "gauge", "namespace resource"),
    _row("scheduler_elasticquota_min", "gauge", "namespace resource"),
    _row("scheduler_elasticquota_max", "gauge", "namespace resource"),
]

# Families of the Prometheus-fed scoring plugins (LoadAware, GPUAware) and of IPAllocation,
# with our own prefix.
PLUGIN_OWN = [
    _row("kube_pyscheduler_plugin_prometheus_data_age_seconds", "gauge", "profile plugin"),
    _row("kube_pyscheduler_plugin_prometheus_stale", "gauge", "profile plugin"),
    _row("kube_pyscheduler_plugin_prometheus_queries_total", "counter", "profile plugin result"),
    _row("kube_pyscheduler_plugin_neutral_scores_total", "counter", "profile plugin"),
    # IPAllocation's pool writes.
    _row("kube_pyscheduler_plugin_ip_allocations_total", "counter", "profile result"),
    _row("kube_pyscheduler_plugin_ip_pool_write_conflicts_total", "counter", "profile"),
]


def _exercise_every_family(metrics: SchedulerMetrics) -> None:
    """Record one value in every family, so every family shows its label names."""
    metrics.schedule_attempt("scheduled", "default-scheduler", 0.01)
    metrics.scheduling_algorithm_duration(0.005)
    metrics.extension_point_duration("Filter", "Success", "default-scheduler", 0.001)
    metrics.plugin_execution_duration("NodeResourcesFit", "Filter", "Success", 0.0001)
    metrics.plugin_evaluation("NodeResourcesFit", "Filter", "default-scheduler")
    metrics.pod_scheduled(2, 0.5)
    metrics.permit_wait("Success", 0.01)
    metrics.queue_incoming("active", "PodAdd")
    metrics.preemption_attempt()
    metrics.preemption_victims(2)
    metrics.preemption_goroutine("success", 0.2)
    metrics.event_handling_duration("NodeAdd", 0.0002)
    metrics.queueing_hint_duration("NodeAffinity", "NodeAdd", "Queue", 0.00002)
    metrics.goroutines("binding", 1)
    metrics.volume_binder_cache_request("find")
    metrics.volume_scheduling_stage_error("bind")
    metrics.dra_binding_conditions_allocation("default-scheduler", "gpu.example.com", "success")
    metrics.resource_claim_create("success")
    metrics.dra_binding_conditions_wait("default-scheduler", "gpu.example.com", "success", 3.0)
    metrics.pod_scheduled_after_flush()
    metrics.batch_attempt("default-scheduler", "hint_used")
    metrics.batch_cache_flushed("default-scheduler", "node_not_full")
    metrics.node_hint_duration(True, "default-scheduler", 0.00003)
    metrics.store_schedule_results_duration("default-scheduler", 0.00002)
    metrics.leader_status("kube-scheduler", True)
    metrics.leader_slowpath("kube-scheduler")
    metrics.event_dropped("queue_full")
    metrics.set_cache_size_source(lambda: {"nodes": 3, "pods": 10, "assumed_pods": 1})
    metrics.set_pending_pods_source(lambda: {"active": 1, "backoff": 2})
    metrics.set_unschedulable_pods_source(lambda: {("NodeAffinity", "default-scheduler"): 4})
    metrics.set_inflight_events_source(lambda: {"NodeAdd": 1})
    metrics.add_plugin_samples_source(
        lambda: {
            "scheduler_podgroups_waiting_at_permit": [(("default-scheduler",), 1.0)],
            "scheduler_podgroup_schedule_attempts_total": [
                (("default-scheduler", "scheduled"), 2.0)
            ],
            **{
                f"scheduler_elasticquota_{kind}": [(("team-a", "cpu"), 2.0)]
                for kind in ("used", "min", "max")
            },
            **{
                row.name: [(("default-scheduler", "LoadAware", "success")[: len(row.labels)], 1.0)]
                for row in PLUGIN_OWN
            },
        }
    )


@dataclass(frozen=True)
class Exposition:
    """A rendered /metrics body, with families keyed by their names exactly as exposed."""

    text: str
    types: dict[str, str]
    helps: dict[str, str]
    samples: tuple[Sample, ...]

    def family_samples(self, family: str) -> list[Sample]:
        suffixes = ("_bucket", "_sum", "_count") if self.types[family] == "histogram" else ("",)
        names = {family + suffix for suffix in suffixes}
        return [s for s in self.samples if s.name in names]

    def bucket_bounds(self, family: str) -> list[float]:
        """Finite bucket bounds of the family's first series, in exposition order."""
        bounds: list[float] = []
        for sample in self.family_samples(family):
            if sample.name != family + "_bucket":
                continue
            bound = float(sample.labels["le"])
            if math.isinf(bound):
                break
            bounds.append(bound)
        return bounds


def _parse(text: str) -> Exposition:
    types: dict[str, str] = {}
    helps: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            name, kind = line.removeprefix("# TYPE ").split(" ", 1)
            types[name] = kind
        elif line.startswith("# HELP "):
            name, help_text = line.removeprefix("# HELP ").split(" ", 1)
            helps[name] = help_text
    samples = tuple(s for f in text_string_to_metric_families(text) for s in f.samples)
    return Exposition(text, types, helps, samples)


@pytest.fixture(scope="module")
def exposition() -> Exposition:
    metrics = SchedulerMetrics()
    _exercise_every_family(metrics)
    return _parse(metrics.render().decode())


@pytest.mark.parametrize("row", [*REFERENCE, *PLUGIN_OWN], ids=lambda row: row.name)
def test_family_matches_reference(exposition: Exposition, row: Row) -> None:
    assert exposition.types.get(row.name) == row.kind
    samples = exposition.family_samples(row.name)
    assert samples, f"{row.name} exposed no samples"
    for sample in samples:
        assert set(sample.labels) - {"le"} == row.labels
    if row.buckets is not None:
        start, factor, count = row.buckets
        expected = [start * factor**i for i in range(count)]
        assert exposition.bucket_bounds(row.name) == pytest.approx(expected, rel=1e-12)


# Families kube-scheduler does not have, each with the reason we expose it.
OURS = {
    # Upstream's event broadcaster drops Events without a trace; an operator should see it.
    _row("scheduler_events_dropped_total", "counter", "reason"): "events lost are visible",
    # Pods naming a scheduler nobody runs stay Pending silently; the rollback alert reads it.
    _row("scheduler_unserved_pods", "gauge", "scheduler_name"): "stuck pods are visible",
}


@pytest.mark.parametrize("row", list(OURS), ids=lambda row: row.name)
def test_own_family_has_its_labels(exposition: Exposition, row: Row) -> None:
    assert exposition.types.get(row.name) == row.kind
    for sample in exposition.family_samples(row.name):
        assert set(sample.labels) == row.labels


def test_exposes_exactly_the_reference_families(exposition: Exposition) -> None:
    # The scheduler's own; the component-wide families are held to upstream's in
    # test_upstream_families, and plugins' own families carry a prefix of their own.
    plugins = {name for name in exposition.types if name.startswith("kube_pyscheduler_plugin_")}
    assert plugins == {row.name for row in PLUGIN_OWN}
    own = {name for name in exposition.types if name.startswith(("scheduler_", "leader_"))}
    assert own == {row.name for row in [*REFERENCE, *OURS]}


@pytest.mark.parametrize(
    "name",
    [
        "scheduler_scheduler_cache_size",  # removed upstream in v1.34
        "scheduler_pod_scheduling_duration_seconds",  # deprecated in v1.29, hidden since
    ],
)
def test_retired_upstream_names_are_absent(exposition: Exposition, name: str) -> None:
    assert name not in exposition.types
    assert name not in exposition.text


def test_attempt_duration_buckets_double_from_one_millisecond(exposition: Exposition) -> None:
    bounds = exposition.bucket_bounds("scheduler_scheduling_attempt_duration_seconds")
    assert bounds == [0.001 * 2**i for i in range(15)]


def test_every_family_has_help_led_by_its_stability(exposition: Exposition) -> None:
    stable = {
        "scheduler_schedule_attempts_total",
        "scheduler_scheduling_attempt_duration_seconds",
        "scheduler_pending_pods",
        "scheduler_queue_incoming_pods_total",
        "scheduler_preemption_attempts_total",
        "scheduler_preemption_victims",
        "scheduler_pod_scheduling_attempts",
        "scheduler_framework_extension_point_duration_seconds",
    }
    # kube-scheduler v1.36's BETA families of its own (metrics/metrics.go); the reference file
    # holds none, as a short run leaves them without samples upstream.
    beta = {
        "scheduler_goroutines",
        "scheduler_pod_scheduling_sli_duration_seconds",
        "scheduler_permit_wait_duration_seconds",
        "scheduler_unschedulable_pods",
        "scheduler_plugin_evaluation_total",
    }
    for name in exposition.types:
        if name.startswith("process_"):
            continue  # the process collector's, unmarked as the Go client's are
        help_text = exposition.helps[name]
        assert help_text.startswith(("[ALPHA] ", "[BETA] ", "[STABLE] ")), name
        assert len(help_text.split(" ", 1)[1]) > 10, name
        assert help_text.startswith("[STABLE] ") == (name in stable), name
        if name.startswith("scheduler_"):
            assert help_text.startswith("[BETA] ") == (name in beta), name


def test_no_created_series_unlike_plain_prometheus_client(exposition: Exposition) -> None:
    assert "_created" not in exposition.text


def test_whole_number_bounds_are_written_as_go_writes_them(exposition: Exposition) -> None:
    les = {
        s.labels["le"]
        for s in exposition.family_samples("scheduler_preemption_victims")
        if "le" in s.labels
    }
    assert les == {"1", "2", "4", "8", "16", "32", "64", "+Inf"}
    assert not any(
        s.labels.get("le", "").endswith(".0") for s in exposition.samples if "le" in s.labels
    )


def test_content_type_is_the_text_format_render_writes() -> None:
    assert SchedulerMetrics.CONTENT_TYPE == "text/plain; version=0.0.4; charset=utf-8"
