"""pop_wait and the flush loop, driven by the event loop and a fake clock (no real waiting)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from scheduler.backend.queue import QueueClosed
from scheduler.backend.queue import SchedulingQueue
from scheduler.backend.queue import run_queue_flushes
from scheduler.framework.errors import SchedulerError
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod
from scheduler.testing.fake_clock import FakeClock

QueueFactory = Callable[..., SchedulingQueue]
Fail = Callable[..., None]
Register = Callable[..., tuple[str, ClusterEventWithHint]]


async def run_ready_tasks() -> None:
    """Give every task that is ready to run one turn, in FIFO order; no time passes."""
    loop = asyncio.get_running_loop()
    turn: asyncio.Future[None] = loop.create_future()
    loop.call_soon(turn.set_result, None)
    await turn


async def test_pop_wait_returns_at_once_when_a_pod_is_queued(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add(make_pod("p").obj())
    info = await queue.pop_wait()
    assert info.pod.name == "p" and info.attempts == 1


async def test_pop_wait_wakes_when_a_pod_is_added(make_queue: QueueFactory) -> None:
    queue = make_queue()
    waiter = asyncio.create_task(queue.pop_wait())
    await run_ready_tasks()
    assert not waiter.done()
    queue.add(make_pod("p").obj())
    info = await asyncio.wait_for(waiter, timeout=5)
    assert info.pod.name == "p"
    assert queue.scheduling_cycle == 1


async def test_pop_wait_wakes_when_a_pod_enters_backoff(
    make_queue: QueueFactory, fail: Fail, reg: Register
) -> None:
    queue = make_queue([reg("A", EventResource.NODE, ActionType.ADD)])
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert info is not None
    fail(queue, info, "A")
    waiter = asyncio.create_task(queue.pop_wait())
    await run_ready_tasks()
    assert not waiter.done()
    queue.node_event(NODE_ADD, None, make_node("n1").obj())
    again = await asyncio.wait_for(waiter, timeout=5)
    assert again is info and again.attempts == 2


async def test_one_pod_satisfies_one_of_two_waiters_and_close_releases_the_other(
    make_queue: QueueFactory,
) -> None:
    queue = make_queue()
    waiters = [asyncio.create_task(queue.pop_wait()) for _ in range(2)]
    await run_ready_tasks()
    queue.add(make_pod("p").obj())
    done, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED, timeout=5)
    assert len(done) == 1 and len(pending) == 1
    assert done.pop().result().pod.name == "p"
    queue.close()
    with pytest.raises(QueueClosed):
        await asyncio.wait_for(pending.pop(), timeout=5)


async def test_pop_wait_raises_after_close(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add(make_pod("p").obj())
    queue.close()
    assert queue.pop() is None
    with pytest.raises(QueueClosed):
        await queue.pop_wait()


async def test_cancelled_waiter_leaves_no_trace(make_queue: QueueFactory) -> None:
    queue = make_queue()
    waiter = asyncio.create_task(queue.pop_wait())
    await run_ready_tasks()
    assert len(queue._waiters) == 1
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert len(queue._waiters) == 0


class RecordingQueue:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.closed = False
        self.backoff_flushes: list[float] = []
        self.leftover_flushes: list[float] = []

    def flush_backoff_completed(self) -> None:
        self.backoff_flushes.append(self.clock.now())

    def flush_unschedulable_leftover(self) -> None:
        self.leftover_flushes.append(self.clock.now())


async def test_flush_loop_runs_on_whole_seconds_and_every_thirty_seconds() -> None:
    clock = FakeClock(start=1000.4)
    queue = RecordingQueue(clock)
    loop_task = asyncio.create_task(run_queue_flushes(queue, clock))
    await run_ready_tasks()
    assert queue.backoff_flushes == []
    clock.advance(0.6)
    await run_ready_tasks()
    for _ in range(60):
        clock.advance(1.0)
        await run_ready_tasks()
    assert queue.backoff_flushes == [float(t) for t in range(1001, 1062)]
    assert queue.leftover_flushes == [1031.0, 1061.0]
    queue.closed = True
    clock.advance(1.0)
    await asyncio.wait_for(loop_task, timeout=5)
    assert len(queue.backoff_flushes) == 61


async def test_flush_loop_moves_backed_off_pods(
    make_queue: QueueFactory, fail: Fail, clock: FakeClock
) -> None:
    queue = make_queue()
    pod = make_pod("p").obj()
    queue.add(pod)
    info = queue.pop()
    assert isinstance(info, QueuedPodInfo)
    fail(queue, info)
    loop_task = asyncio.create_task(run_queue_flushes(queue, clock))
    await run_ready_tasks()
    clock.advance(1.0)
    await run_ready_tasks()
    assert queue.locate(pod.key) == "backoff"
    clock.advance(1.0)
    await run_ready_tasks()
    assert queue.locate(pod.key) == "active"
    queue.close()
    clock.advance(1.0)
    await asyncio.wait_for(loop_task, timeout=5)


def test_queue_closed_belongs_to_the_scheduler_error_hierarchy() -> None:
    assert issubclass(QueueClosed, SchedulerError)
