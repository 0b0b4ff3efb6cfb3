"""The client-side token bucket, on a fake clock: burst, refill, order, cancellation."""

from __future__ import annotations

import asyncio

import pytest

from scheduler.cluster.kube.rate_limit import TokenBucket
from scheduler.framework.errors import ConfigError
from scheduler.testing import FakeClock


async def settle() -> None:
    """Let every runnable task take its next step (no time passes on the fake clock)."""
    for _ in range(5):
        await asyncio.sleep(0)


def start(bucket: TokenBucket, count: int) -> list[asyncio.Task[None]]:
    return [asyncio.create_task(bucket.acquire()) for _ in range(count)]


async def test_a_full_bucket_lets_a_burst_through_at_once(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=10, burst=3, clock=clock)
    tasks = start(bucket, 4)
    await settle()
    assert [t.done() for t in tasks] == [True, True, True, False]
    tasks[-1].cancel()  # the one still waiting for a token
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_waiter_is_served_after_one_refill_interval(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=4, burst=1, clock=clock)
    await bucket.acquire()
    (waiter,) = start(bucket, 1)
    await settle()
    clock.advance(0.24)
    await settle()
    assert not waiter.done()
    clock.advance(0.01)
    await settle()
    assert waiter.done()


async def test_waiters_are_served_in_arrival_order_one_interval_apart(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=2, burst=1, clock=clock)
    await bucket.acquire()
    served: list[int] = []

    async def request(number: int) -> None:
        await bucket.acquire()
        served.append(number)

    tasks = [asyncio.create_task(request(n)) for n in range(3)]
    await settle()
    for expected in ([0], [0, 1], [0, 1, 2]):
        clock.advance(0.5)
        await settle()
        assert served == expected
    await asyncio.gather(*tasks)


async def test_an_idle_bucket_refills_only_up_to_burst(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=100, burst=5, clock=clock)
    for _ in range(5):
        await bucket.acquire()
    assert bucket.available == pytest.approx(0)
    clock.advance(60)
    assert bucket.available == pytest.approx(5)
    tasks = start(bucket, 6)
    await settle()
    assert sum(t.done() for t in tasks) == 5
    clock.advance(0.01)
    await settle()
    assert all(t.done() for t in tasks)


async def test_a_cancelled_waiter_returns_its_reservation(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=1, burst=1, clock=clock)
    await bucket.acquire()
    (waiter,) = start(bucket, 1)
    await settle()
    assert bucket.available == pytest.approx(-1)
    waiter.cancel()
    await settle()
    assert waiter.cancelled()
    assert bucket.available == pytest.approx(0)


async def test_negative_qps_never_waits(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=-1, burst=0, clock=clock)
    assert not bucket.limited
    tasks = start(bucket, 1000)
    await settle()
    assert all(t.done() for t in tasks)
    assert clock.pending_timers == 0


async def test_zeros_are_client_gos_defaults_of_5_qps_and_a_burst_of_10(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=0, burst=0, clock=clock)
    assert bucket.limited
    tasks = start(bucket, 11)
    await settle()
    assert [t.done() for t in tasks] == [True] * 10 + [False]
    clock.advance(0.2)
    await settle()
    assert tasks[-1].done()


def test_positive_qps_needs_a_burst_of_at_least_one(clock: FakeClock) -> None:
    with pytest.raises(ConfigError, match=r"clientConnection\.burst"):
        TokenBucket(qps=5, burst=-1, clock=clock)
