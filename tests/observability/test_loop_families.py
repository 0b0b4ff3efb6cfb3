"""The lock-free counters and histograms expose exactly what prometheus_client's own do."""

from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client import Counter
from prometheus_client import Histogram
from prometheus_client import generate_latest

from scheduler.observability.families import LoopCounter
from scheduler.observability.families import LoopHistogram

BUCKETS = (0.001, 0.01, 0.1, 1.0, 10.0)
AMOUNTS = (0.0, 0.0005, 0.001, 0.0010001, 0.05, 0.1, 3.0, 10.0, 11.0, math.inf, -2.0, math.nan)


def _histograms(kind: type[Histogram]) -> bytes:
    registry = CollectorRegistry()
    family = kind("h_seconds", "A histogram.", ["point"], registry=registry, buckets=BUCKETS)
    for i, amount in enumerate(AMOUNTS):
        family.labels("a" if i % 3 else "b").observe(amount)
    bare = kind("bare_seconds", "No labels.", registry=registry, buckets=BUCKETS)
    bare.observe(0.2)
    return generate_latest(registry)


def _counters(kind: type[Counter]) -> bytes:
    registry = CollectorRegistry()
    family = kind("c_total", "A counter.", ["plugin", "point"], registry=registry)
    family.labels("x", "Filter").inc(5000)
    family.labels("y", "Score").inc()
    family.labels("x", "Filter").inc(0.5)
    bare = kind("bare_total", "No labels.", registry=registry)
    bare.inc(2)
    return generate_latest(registry)


def _without_created(text: bytes) -> list[bytes]:
    # The creation times differ between any two families; everything else must not.
    return [line for line in text.splitlines() if b"_created" not in line]


def test_histogram_samples_match_prometheus_client() -> None:
    assert _without_created(_histograms(LoopHistogram)) == _without_created(_histograms(Histogram))


def test_counter_samples_match_prometheus_client() -> None:
    assert _without_created(_counters(LoopCounter)) == _without_created(_counters(Counter))


def test_both_keep_a_created_series_like_the_stock_classes() -> None:
    assert _histograms(LoopHistogram).count(b"_created") == _histograms(Histogram).count(
        b"_created"
    )
    assert _counters(LoopCounter).count(b"_created") == _counters(Counter).count(b"_created")


def test_counter_refuses_negative_amounts_and_unlabelled_use() -> None:
    family = LoopCounter("c_total", "A counter.", ["plugin"], registry=CollectorRegistry())
    with pytest.raises(ValueError, match="non-negative"):
        family.labels("x").inc(-1)
    with pytest.raises(ValueError, match="is missing label values"):
        family.inc()


def test_histogram_refuses_observing_a_family_with_labels() -> None:
    family = LoopHistogram("h", "A histogram.", ["point"], registry=CollectorRegistry())
    with pytest.raises(ValueError, match="is missing label values"):
        family.observe(1.0)


@pytest.mark.parametrize("amount", [0.0005, 0.1, 3.0, 11.0])
def test_repeated_observations_expose_what_as_many_single_ones_do(amount: float) -> None:
    def exposed(repeat: bool) -> list[bytes]:
        registry = CollectorRegistry()
        family = LoopHistogram("h_seconds", "A histogram.", registry=registry, buckets=BUCKETS)
        family.observe(0.02)
        if repeat:
            family.observe_repeated(amount, 500)
        else:
            for _ in range(500):
                family.observe(amount)
        return _without_created(generate_latest(registry))

    repeated, single = exposed(True), exposed(False)
    # The sums differ only by the rounding of 500 additions against one product.
    assert [line for line in repeated if b"_sum" not in line] == [
        line for line in single if b"_sum" not in line
    ]
    [repeated_sum] = [float(line.split()[-1]) for line in repeated if b"_sum" in line]
    [single_sum] = [float(line.split()[-1]) for line in single if b"_sum" in line]
    assert repeated_sum == pytest.approx(single_sum, rel=1e-9)
