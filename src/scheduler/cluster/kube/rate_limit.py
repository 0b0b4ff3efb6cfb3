"""A client-side token bucket in front of every API request (`clientConnection.qps`/`burst`).

It behaves like client-go's: the bucket starts full with `burst` tokens and refills at `qps`
tokens per second; a request that finds it empty waits for its turn. Waiters are served in
arrival order because each one reserves its token up front (the balance goes negative) and then
sleeps exactly until the refill covers its reservation, so no waiter can overtake another.

A `qps` of 0 means client-go's default of 5 requests a second, and a `burst` of 0 its default
of 10, so `--kube-api-qps=0` limits as it does in kube-scheduler; only a negative `qps` lifts
the limit.
"""

from __future__ import annotations

import asyncio

from scheduler.framework.clock import Clock
from scheduler.framework.errors import ConfigError

# client-go's rest.DefaultQPS and rest.DefaultBurst, what a zero asks for.
DEFAULT_QPS = 5.0
DEFAULT_BURST = 10


class TokenBucket:
    """`await acquire()` before each request. A negative `qps` disables limiting, as in
    client-go; zeros take client-go's defaults (see the module doc)."""

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        qps, burst = client_go_rate(qps, burst)
        if qps > 0 and burst < 1:
            raise ConfigError(
                f"clientConnection.burst: must be at least 1 when qps is positive, got {burst}"
            )
        self._qps = qps
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock.now()

    @property
    def limited(self) -> bool:
        return self._qps > 0

    @property
    def available(self) -> float:
        """Tokens in the bucket now; negative while requests are queued for a refill."""
        self._refill()
        return self._tokens

    async def acquire(self) -> None:
        if self._qps <= 0:
            return
        self._refill()
        self._tokens -= 1
        if self._tokens >= 0:
            return
        try:
            await self._clock.sleep(-self._tokens / self._qps)
        except asyncio.CancelledError:
            # Give the reservation back so a cancelled request does not slow the ones behind it.
            self._tokens += 1
            raise

    def _refill(self) -> None:
        now = self._clock.now()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self._tokens = min(self._burst, self._tokens + elapsed * self._qps)


def client_go_rate(qps: float, burst: int) -> tuple[float, int]:
    """The rate client-go's REST client gives a `qps` and `burst`: zeros are its defaults."""
    return (qps or DEFAULT_QPS), (burst or DEFAULT_BURST)
