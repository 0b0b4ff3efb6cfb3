"""exponential_buckets: upstream's Exp(start, factor, count) layouts."""

from __future__ import annotations

import pytest

from scheduler.observability import exponential_buckets


@pytest.mark.parametrize(
    ("start", "factor", "count", "expected"),
    [
        (1, 2, 5, (1, 2, 4, 8, 16)),
        (0.5, 3, 3, (0.5, 1.5, 4.5)),
        (0.001, 2, 1, (0.001,)),
    ],
    ids=["Exp(1,2,5)", "Exp(0.5,3,3)", "single"],
)
def test_bounds(start: float, factor: float, count: int, expected: tuple[float, ...]) -> None:
    assert exponential_buckets(start, factor, count) == expected


def test_fine_grained_layout_spans_ten_microseconds_to_about_twenty_two_milliseconds() -> None:
    bounds = exponential_buckets(0.00001, 1.5, 20)
    assert len(bounds) == 20
    assert bounds[0] == 0.00001
    assert bounds[-1] == pytest.approx(0.00001 * 1.5**19)
    assert 0.022 < bounds[-1] < 0.023


@pytest.mark.parametrize(
    ("start", "factor", "count"),
    [(0, 2, 5), (-1, 2, 5), (1, 1, 5), (1, 0.5, 5), (1, 2, 0)],
    ids=["zero-start", "negative-start", "factor-one", "shrinking", "no-buckets"],
)
def test_invalid_layouts_are_rejected(start: float, factor: float, count: int) -> None:
    with pytest.raises(ValueError, match="exponential buckets"):
        exponential_buckets(start, factor, count)
