"""Profiles in pprof's wire format: what is written reads back field by field."""

from __future__ import annotations

import pytest

from scheduler.app.profiling.pprof_format import Frame
from scheduler.app.profiling.pprof_format import ProfileBuilder
from tests.app.profiling.pprof_reader import read_profile

LEAF = Frame("work", "/src/jobs.py", 12, 10)
CALLER = Frame("Loop.run", "/src/loop.py", 40, 30)
OTHER = Frame("idle_check", "/src/loop.py", 55, 50)


def test_samples_read_back_with_their_stacks_types_and_period() -> None:
    builder = ProfileBuilder(
        [("samples", "count"), ("cpu", "nanoseconds")], ("cpu", "nanoseconds", 10_000_000)
    )
    builder.add((LEAF, CALLER), (1, 10_000_000))
    builder.add((OTHER, CALLER), (1, 10_000_000))
    builder.add((LEAF, CALLER), (1, 10_000_000))

    profile = read_profile(
        builder.encode(time_nanos=1_700_000_000_000_000_000, duration_nanos=2_000_000_000)
    )

    assert profile.sample_types == [("samples", "count"), ("cpu", "nanoseconds")]
    # Equal stacks share one sample; locations are listed innermost first.
    assert sorted(profile.samples) == [
        (["idle_check", "Loop.run"], [1, 10_000_000]),
        (["work", "Loop.run"], [2, 20_000_000]),
    ]
    assert profile.period_type == ("cpu", "nanoseconds")
    assert profile.period == 10_000_000
    assert (profile.time_nanos, profile.duration_nanos) == (
        1_700_000_000_000_000_000,
        2_000_000_000,
    )
    assert profile.mapping_files == ["python"]
    assert profile.total("Loop.run", index=1) == 30_000_000


def test_a_profile_without_samples_is_still_well_formed() -> None:
    profile = read_profile(
        ProfileBuilder([("goroutine", "count")], ("goroutine", "count", 1)).encode(5, 0)
    )
    assert profile.samples == []
    assert profile.sample_types == [("goroutine", "count")]


def test_values_must_match_the_sample_types() -> None:
    builder = ProfileBuilder([("samples", "count")], ("cpu", "nanoseconds", 1))
    with pytest.raises(ValueError, match="2 values for 1 sample types"):
        builder.add((LEAF,), (1, 2))
