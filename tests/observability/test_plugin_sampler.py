"""PluginMetricsSampler: which cycles time their plugins."""

from __future__ import annotations

import random

import pytest

from scheduler.observability import PluginMetricsSampler


def test_default_samples_about_one_cycle_in_ten() -> None:
    sampler = PluginMetricsSampler(random.Random(20240501))
    assert sampler.percent == 10
    picked = sum(sampler.sample() for _ in range(20_000))
    # Binomial(20000, 0.1) has a standard deviation of about 42: 1700..2300 is > 7 sigma.
    assert 1700 < picked < 2300


@pytest.mark.parametrize(
    ("percent", "low", "high"), [(0, 0, 0), (50, 900, 1100), (100, 2000, 2000)]
)
def test_rate_follows_the_percent(percent: int, low: int, high: int) -> None:
    sampler = PluginMetricsSampler(random.Random(7), percent)
    picked = sum(sampler.sample() for _ in range(2000))
    assert low <= picked <= high


def test_same_seed_picks_the_same_cycles() -> None:
    first = PluginMetricsSampler(random.Random(42))
    second = PluginMetricsSampler(random.Random(42))
    assert [first.sample() for _ in range(500)] == [second.sample() for _ in range(500)]


@pytest.mark.parametrize("percent", [-1, 101])
def test_percent_outside_zero_to_hundred_is_rejected(percent: int) -> None:
    with pytest.raises(ValueError, match=r"0\.\.100"):
        PluginMetricsSampler(random.Random(1), percent)
