"""Churn pacing and figures, on a fake clock: no test here waits for real time."""

from __future__ import annotations

import pytest

from bench.compare_churn import KEEP_UP_BACKLOG_S
from bench.compare_churn import OFFERED_SHARE
from bench.compare_churn import BacklogSample
from bench.compare_churn import Pacer
from bench.compare_churn import churn_figures
from bench.compare_churn import kept_up


class FakeClock:
    """Time moves only when the pacer sleeps (or a slow emit advances it)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds


def test_pacer_emits_each_call_at_its_due_time() -> None:
    clock = FakeClock()
    emitted: list[tuple[int, float]] = []
    pacer = Pacer(4.0, 6, clock=clock, sleep=clock.sleep)
    took = pacer.run(lambda i: emitted.append((i, clock.now - 1000.0)))
    assert emitted == [(i, i * 0.25) for i in range(6)]
    assert took == pytest.approx(1.25)


def test_pacer_catches_up_after_a_slow_emit_without_skipping() -> None:
    clock = FakeClock()
    emitted: list[tuple[int, float]] = []

    def emit(index: int) -> None:
        emitted.append((index, clock.now - 1000.0))
        if index == 1:
            clock.now += 1.0  # one creation stalls for a second

    Pacer(4.0, 8, clock=clock, sleep=clock.sleep).run(emit)
    assert [i for i, _ in emitted] == list(range(8))
    # Pods 2-5 fell due while pod 1 stalled: they go out at once, then pacing resumes.
    assert [t for _, t in emitted] == [0.0, 0.25, 1.25, 1.25, 1.25, 1.25, 1.5, 1.75]


def test_pacer_due_counts() -> None:
    pacer = Pacer(10.0, 25)
    assert pacer.due(-1.0) == 0
    assert pacer.due(0.0) == 1
    assert pacer.due(0.1) == 2
    assert pacer.due(1.0) == 11
    assert pacer.due(60.0) == 25


@pytest.mark.parametrize(("rate", "total"), [(0.0, 1), (-1.0, 1), (1.0, -1)])
def test_pacer_rejects_bad_settings(rate: float, total: int) -> None:
    with pytest.raises(ValueError, match=r"rate|total"):
        Pacer(rate, total)


def test_kept_up_allows_a_backlog_of_a_few_seconds_of_creation() -> None:
    limit = int(50 * KEEP_UP_BACKLOG_S)
    assert kept_up(50.0, 50.0, 50.0, limit)
    assert not kept_up(50.0, 50.0, 50.0, limit + 1)
    # At a trickle a single pending pod is still keeping up.
    assert kept_up(0.1, 0.1, 0.1, 1)


def test_kept_up_needs_the_rate_asked_for_to_have_been_offered() -> None:
    offered = 100.0 * OFFERED_SHARE
    assert kept_up(100.0, offered, offered, 0)
    assert not kept_up(100.0, offered - 1.0, offered - 1.0, 0)


def test_kept_up_needs_binding_at_the_creation_rate() -> None:
    # A short run can end before the backlog passes its limit; the bound rate still tells.
    assert kept_up(100.0, 100.0, 100.0 * OFFERED_SHARE, 10)
    assert not kept_up(100.0, 100.0, 100.0 * OFFERED_SHARE - 1.0, 10)


def test_churn_figures() -> None:
    samples = [BacklogSample(10, 8), BacklogSample(20, 5), BacklogSample(100, 100)]
    latencies = [0.01 * i for i in range(1, 101)]  # 10 ms .. 1000 ms
    figures = churn_figures(10.0, 100, latencies, samples, creation_s=10.0, last_bound_s=10.5)
    assert figures["created_per_s"] == 10.0
    assert figures["bound_per_s"] == pytest.approx(100 / 10.5)
    assert figures["max_backlog"] == 15.0
    assert figures["kept_up"] == 1.0
    assert figures["p50_latency_ms"] == pytest.approx(500.0)
    assert figures["p99_latency_ms"] == pytest.approx(990.0)


def test_a_growing_backlog_is_not_keeping_up() -> None:
    samples = [BacklogSample(10 * t, 7 * t) for t in range(1, 30)]
    figures = churn_figures(10.0, 290, [], samples, creation_s=29.0, last_bound_s=41.0)
    assert figures["max_backlog"] == 87.0
    assert figures["kept_up"] == 0.0


def test_a_rate_the_machine_could_not_offer_is_not_keeping_up() -> None:
    samples = [BacklogSample(10, 10)]
    figures = churn_figures(10.0, 100, [], samples, creation_s=20.0, last_bound_s=20.0)
    assert figures["created_per_s"] == 5.0
    assert figures["kept_up"] == 0.0
