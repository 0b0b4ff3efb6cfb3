"""prometheus_client families built from catalog specs, in a given registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from prometheus_client import Counter
from prometheus_client import Gauge
from prometheus_client import Histogram

from scheduler.observability.catalog import Kind
from scheduler.observability.catalog import MetricSpec


def new_counter(spec: MetricSpec, registry: CollectorRegistry) -> Counter:
    assert spec.kind is Kind.COUNTER, spec.name
    return Counter(spec.name, spec.help, spec.labels, registry=registry)


def new_gauge(spec: MetricSpec, registry: CollectorRegistry) -> Gauge:
    assert spec.kind is Kind.GAUGE and not spec.scraped, spec.name
    return Gauge(spec.name, spec.help, spec.labels, registry=registry)


def new_histogram(spec: MetricSpec, registry: CollectorRegistry) -> Histogram:
    assert spec.kind is Kind.HISTOGRAM, spec.name
    return Histogram(spec.name, spec.help, spec.labels, registry=registry, buckets=spec.buckets)
