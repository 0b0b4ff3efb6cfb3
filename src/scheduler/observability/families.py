"""prometheus_client families built from catalog specs, in a given registry.

Counters and histograms are prometheus_client's own classes with a cheaper way of counting:
a scheduling cycle records some sixty increments, and prometheus_client takes a lock, checks
observability and (for a histogram) walks the buckets one by one on each. The scheduler records
from one thread (its event loop), so its children keep plain numbers, found by bisection, and
hand prometheus_client the same samples at scrape time: names, labels, HELP and TYPE lines and
values are exactly those of the stock classes.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_left
from collections.abc import Iterable

from prometheus_client import CollectorRegistry
from prometheus_client import Counter
from prometheus_client import Gauge
from prometheus_client import Histogram
from prometheus_client import metrics as stock
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from scheduler.observability.catalog import Kind
from scheduler.observability.catalog import MetricSpec


class LoopCounter(Counter):
    """A Counter whose children count without a lock (for one-thread use)."""

    _total: float

    def _metric_init(self) -> None:
        self._total = 0.0
        self._created = time.time()

    def inc(self, amount: float = 1, exemplar: dict[str, str] | None = None) -> None:
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        if exemplar:
            raise ValueError("exemplars are not recorded by the scheduler's counters")
        try:
            self._total += amount
        except AttributeError:
            # A family with labels counts only through its children, as the stock class says.
            self._raise_if_not_observable()  # type: ignore[no-untyped-call]
            raise

    def reset(self) -> None:
        self._total = 0.0
        self._created = time.time()

    def _child_samples(self) -> Iterable[Sample]:
        total = Sample("_total", {}, self._total, None, None)
        if not stock._use_created:
            return (total,)
        return (total, Sample("_created", {}, self._created, None, None))


class LoopHistogram(Histogram):
    """A Histogram whose children count without a lock, finding the bucket by bisection."""

    _counts: list[int]
    _sum_total: float

    def _metric_init(self) -> None:
        self._counts = [0] * len(self._upper_bounds)
        self._sum_total = 0.0
        self._created = time.time()

    def observe(self, amount: float, exemplar: dict[str, str] | None = None) -> None:
        if exemplar:
            raise ValueError("exemplars are not recorded by the scheduler's histograms")
        try:
            self._sum_total += amount
        except AttributeError:
            self._raise_if_not_observable()  # type: ignore[no-untyped-call]
            raise
        # The first bound at or above the amount, as the stock class's `amount <= bound` walk;
        # NaN is at or below no bound, so it counts in no bucket (but in the sum), as there.
        if not math.isnan(amount):
            self._counts[bisect_left(self._upper_bounds, amount)] += 1

    def observe_repeated(self, amount: float, times: int) -> None:
        """`times` observations of `amount` at the cost of one."""
        if not math.isnan(amount):
            self._counts[bisect_left(self._upper_bounds, amount)] += times
        self._sum_total += amount * times

    def _child_samples(self) -> Iterable[Sample]:
        samples = []
        cumulative = 0.0
        for bound, count in zip(self._upper_bounds, self._counts, strict=True):
            cumulative += count
            le = floatToGoString(bound)  # type: ignore[no-untyped-call]
            samples.append(Sample("_bucket", {"le": le}, cumulative, None))
        samples.append(Sample("_count", {}, cumulative, None, None))
        if self._upper_bounds[0] >= 0:
            samples.append(Sample("_sum", {}, self._sum_total, None, None))
        if stock._use_created:
            samples.append(Sample("_created", {}, self._created, None, None))
        return tuple(samples)


def new_counter(spec: MetricSpec, registry: CollectorRegistry) -> Counter:
    assert spec.kind is Kind.COUNTER, spec.name
    return LoopCounter(spec.name, spec.help, spec.labels, registry=registry)


def new_gauge(spec: MetricSpec, registry: CollectorRegistry) -> Gauge:
    assert spec.kind is Kind.GAUGE and not spec.scraped, spec.name
    return Gauge(spec.name, spec.help, spec.labels, registry=registry)


def new_histogram(spec: MetricSpec, registry: CollectorRegistry) -> LoopHistogram:
    assert spec.kind is Kind.HISTOGRAM, spec.name
    return LoopHistogram(spec.name, spec.help, spec.labels, registry=registry, buckets=spec.buckets)
