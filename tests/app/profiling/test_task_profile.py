"""The task profile: every task with its chain of awaits, and every thread."""

from __future__ import annotations

import asyncio

from scheduler.app.profiling.stacks import task_stack
from scheduler.app.profiling.task_profile import routines
from scheduler.app.profiling.task_profile import task_profile
from scheduler.app.profiling.task_profile import task_text
from tests.app.profiling.pprof_reader import read_profile


async def innermost(release: asyncio.Event) -> None:
    await release.wait()


async def middle(release: asyncio.Event) -> None:
    await innermost(release)


async def outermost(release: asyncio.Event) -> None:
    await middle(release)


async def test_a_waiting_task_shows_its_whole_chain_of_awaits() -> None:
    release = asyncio.Event()
    task = asyncio.create_task(outermost(release), name="watch-pods")
    await asyncio.sleep(0)
    try:
        stack = task_stack(task)
        # Innermost first; the Event's own wait is library code below ours.
        names = [frame.function for frame in stack]
        assert names.index("innermost") < names.index("middle") < names.index("outermost")
        found = {r.name: r for r in routines()}
        assert found["watch-pods"].state == "waiting"
        assert found["watch-pods"].stack == stack
        assert any(r.kind == "thread" and r.state == "running" for r in found.values())
        [me] = [r for r in found.values() if r.kind == "task" and r.state == "running"]
        assert "test_a_waiting_task_shows_its_whole_chain_of_awaits" in [
            f.function for f in me.stack
        ]
    finally:
        release.set()
        await task
    assert task_stack(task) == ()


async def test_text_and_profile_count_the_same_tasks() -> None:
    release = asyncio.Event()
    tasks = [asyncio.create_task(outermost(release), name=f"twin-{i}") for i in range(3)]
    await asyncio.sleep(0)
    try:
        found = routines()
        counted = task_text(found, debug=1)
        every = task_text(found, debug=2)
        profile = read_profile(task_profile(found))
    finally:
        release.set()
        await asyncio.gather(*tasks)

    assert counted.startswith(f"goroutine profile: total {len(found)}\n")
    # The three twins share a stack: one entry counted 3, listed outermost first.
    twin_entry = next(part for part in counted.split("\n\n") if "in outermost" in part)
    [count_line] = [line for line in twin_entry.splitlines() if line.endswith(" @")]
    assert count_line == "3 @"
    for i in range(3):
        assert f"task twin-{i} [waiting]:" in every
    assert every.index("in outermost") < every.index("in innermost")
    assert profile.sample_types == [("goroutine", "count")]
    assert profile.total("outermost") == 3
    assert sum(values[0] for _, values in profile.samples) == len(found)
