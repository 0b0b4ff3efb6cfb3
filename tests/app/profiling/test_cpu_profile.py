"""The CPU profile: busy code on the event loop shows, the loop's idle poll does not, and one
profile runs at a time."""

from __future__ import annotations

import asyncio

import pytest

from scheduler.app.profiling.cpu_profile import CpuProfiler
from scheduler.app.profiling.cpu_profile import ProfilerBusyError
from scheduler.app.profiling.pprof_format import Frame
from scheduler.app.profiling.stacks import is_idle
from tests.app.profiling.pprof_reader import read_profile

# Enough work to span many 10 ms samples on any machine, short enough for a unit test.
BUSY_ROUNDS = 40


def spin_on_the_loop() -> int:
    total = 0
    for i in range(200_000):
        total += i * i % 7
    return total


async def test_busy_code_on_the_loop_is_sampled_and_waiting_is_not() -> None:
    profiler = CpuProfiler(interval_s=0.002)
    profiling = asyncio.ensure_future(profiler.profile(0.5))
    await asyncio.sleep(0)  # the profile's sampler starts
    for _ in range(BUSY_ROUNDS):
        spin_on_the_loop()
        await asyncio.sleep(0)
    profile = read_profile(await profiling)

    assert profile.sample_types == [("samples", "count"), ("cpu", "nanoseconds")]
    assert profile.period == 2_000_000
    assert profile.total("spin_on_the_loop") > 0
    # While the loop waited in its poll it was idle: no sample ends in the selector.
    assert not [stack for stack, _ in profile.samples if stack[0].endswith("select")]
    for _, (count, cpu) in profile.samples:
        assert cpu == count * 2_000_000


async def test_a_second_profile_at_the_same_time_is_refused() -> None:
    profiler = CpuProfiler(interval_s=0.002)
    first = asyncio.ensure_future(profiler.profile(0.2))
    await asyncio.sleep(0)
    with pytest.raises(ProfilerBusyError, match="cpu profiling already in use"):
        await profiler.profile(0.1)
    await first
    # Once the first is done, the next may run.
    assert read_profile(await profiler.profile(0.01)).sample_types


@pytest.mark.parametrize(
    ("leaf", "idle"),
    [
        (Frame("EpollSelector.select", "/usr/lib/python3.11/selectors.py", 468), True),
        (Frame("Condition.wait", "/usr/lib/python3.11/threading.py", 320), True),
        (Frame("Queue.get", "/usr/lib/python3.11/queue.py", 171), True),
        (Frame("filter_nodes", "/app/scheduler/runtime/filtering.py", 80), False),
        (Frame("select", "/app/plugins/mine.py", 3), False),
    ],
)
def test_idle_is_a_wait_at_the_innermost_frame(leaf: Frame, idle: bool) -> None:
    assert is_idle((leaf, Frame("main", "/app/main.py", 1))) is idle
