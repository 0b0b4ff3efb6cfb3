"""Our metric families against kube-scheduler v1.36's, family by family.

`data/upstream_metrics.yaml` is what kube-scheduler's /metrics showed after scheduling a few
pods (hack/upstream_metric_families.py writes it). Every family there must be ours too, with
the same type, labels, buckets and stability marker, unless it is listed below with the reason
we do not have it. Every family of ours must be upstream's, or be listed as upstream's own
family that the reference run gave no series to (upstream prints a family only once it has one).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.observability import SchedulerMetrics
from scheduler.observability import catalog
from scheduler.observability import component_catalog

UPSTREAM = Path(__file__).parent / "data" / "upstream_metrics.yaml"

# Upstream families we do not expose, by name pattern, with the reason.
NOT_OURS = {
    "go_*": "Go runtime statistics; a Python process has no Go runtime to describe",
    "aggregator_*": "API aggregation discovery: kube-apiserver code linked into the binary, idle",
    "apiserver_audit_*": "audit logging of kube-apiserver code linked in; a scheduler has none",
    "apiserver_envelope_encryption_*": "etcd encryption of kube-apiserver code linked in, idle",
    "apiserver_storage_*": "etcd storage of kube-apiserver code linked in, idle",
    "apiserver_validation_*": "declarative validation of kube-apiserver code linked in, idle",
    "apiserver_webhooks_*": "admission webhooks of kube-apiserver code linked in, idle",
    "rest_client_exec_plugin_*": "client-go exec credential plugins; kubeconfig exec is unused",
    "rest_client_transport_*": "client-go's cache of HTTP transports; one pool per client here",
    "workqueue_*": "upstream's series are those of the client-CA and serving-certificate "
    "reload controllers, which we do not run (CAs are read at start-up)",
    "version_info": "compatibility versions: only the followed release is accepted",
    "*metrics_total": "component-base's bookkeeping of its own registry (registered, hidden, "
    "disabled metrics)",
    "cardinality_enforcement_unexpected_categorizations_total": "component-base's label "
    "allow-list bookkeeping; label filtering is refused",
}
# Our families that upstream registers too but printed no series for in the reference run.
UPSTREAM_WITHOUT_SERIES_THERE = {
    "scheduler_permit_wait_duration_seconds",
    "scheduler_queueing_hint_execution_duration_seconds",
    "scheduler_volume_binder_cache_requests_total",
    "scheduler_volume_scheduling_stage_error_total",
    "scheduler_dra_bindingconditions_allocations_total",
    "scheduler_dra_bindingconditions_wait_duration_seconds",
    "scheduler_resourceclaim_creates_total",
    # component-base's leader-election counter: no series until a renewal takes the slow path.
    "leader_election_slowpath_total",
    # Registered only with the GenericWorkload gate on, for upstream's own pod groups; ours
    # counts Coscheduling's gangs with two of its results (`result`, `profile`, alpha).
    "scheduler_podgroup_schedule_attempts_total",
}
# Families of ours that upstream does not have at all, with the reason.
OURS_ONLY = {
    "scheduler_events_dropped_total": "upstream's event broadcaster drops Events without a "
    "trace; an operator should see it",
    # scheduler-plugins' Coscheduling and CapacityScheduling run out of tree upstream and
    # export nothing of this kind; gang and quota users ask what is waiting and what is used.
    "scheduler_podgroups_waiting_at_permit": "gang scheduling is in tree here",
    "scheduler_elasticquota_used": "elastic quotas are in tree here",
    "scheduler_elasticquota_min": "elastic quotas are in tree here",
    "scheduler_elasticquota_max": "elastic quotas are in tree here",
    "scheduler_unserved_pods": "a pod naming a scheduler nobody runs stays Pending without a "
    "trace; the rollback alert needs to see it",
    # Scoring from Prometheus data (LoadAware, GPUAware) must say when that data is stale.
    **{
        f"kube_pyscheduler_plugin_{name}": "scoring from Prometheus is in tree here"
        for name in (
            "prometheus_data_age_seconds",
            "prometheus_stale",
            "prometheus_queries_total",
            "neutral_scores_total",
        )
    },
    "kube_pyscheduler_plugin_ip_allocations_total": "IP allocation is in tree here",
    "kube_pyscheduler_plugin_ip_pool_write_conflicts_total": "IP allocation is in tree here",
}


@dataclass(frozen=True)
class Shape:
    type: str
    labels: tuple[str, ...]
    buckets: tuple[float, ...]
    stability: str | None


@cache
def upstream() -> dict[str, Shape]:
    data: dict[str, Any] = yaml.safe_load(UPSTREAM.read_text())
    return {
        name: Shape(
            entry["type"],
            tuple(sorted(entry["labels"])),
            tuple(entry.get("buckets") or ()),
            entry["stability"],
        )
        for name, entry in data.items()
    }


@cache
def ours() -> dict[str, Shape]:
    shapes = {
        spec.name: Shape(
            str(spec.kind), tuple(sorted(spec.labels)), spec.buckets, str(spec.stability)
        )
        for spec in (*catalog.ALL, *component_catalog.ALL)
    }
    # prometheus_client's own collectors, read from the exposition: no labels, no marker.
    text = SchedulerMetrics().render().decode()
    for name, kind in re.findall(r"^# TYPE (process_\S+) (\S+)$", text, re.MULTILINE):
        full = f"{name}_total" if kind == "counter" and not name.endswith("_total") else name
        shapes[full] = Shape(kind, (), (), None)
    return shapes


def _not_ours(name: str) -> str | None:
    for pattern, reason in NOT_OURS.items():
        if fnmatch.fnmatchcase(name, pattern):
            return reason
    return None


@pytest.mark.parametrize("name", sorted(upstream()))
def test_each_upstream_family_is_ours_alike_or_listed_with_a_reason(name: str) -> None:
    theirs = upstream()[name]
    mine = ours().get(name)
    if _not_ours(name) is not None:
        assert mine is None, f"{name} is ours now: take it off the list"
        return
    assert mine is not None, f"{name} is missing"
    assert mine == theirs


def test_every_family_of_ours_is_upstreams() -> None:
    extra = set(ours()) - set(upstream()) - UPSTREAM_WITHOUT_SERIES_THERE - set(OURS_ONLY)
    assert extra == set()
    assert set(upstream()).isdisjoint(UPSTREAM_WITHOUT_SERIES_THERE)
    assert set(upstream()).isdisjoint(OURS_ONLY)
    assert set(OURS_ONLY) <= set(ours())


def test_every_listed_difference_is_still_one() -> None:
    names = set(upstream())
    unused = [p for p in NOT_OURS if not fnmatch.filter(names, p)]
    assert unused == []
