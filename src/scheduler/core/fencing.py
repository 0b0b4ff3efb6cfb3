"""No write that only the leader may make without proof of holding the lease.

Bindings, preemption evictions and the writes plugins make in PreBind change what other
replicas would decide; made by a replica that has lost the lease, they double-book a node. The
fenced API lets such a write start only while the lease holder's tenure lasts
(`LeaderElector.tenure_remaining`), checks again immediately before it goes on the wire (the
API transport calls the send gate after its rate limiter), and abandons it if the tenure ends
while it still waits, so nothing is sent afterwards. Renewals while it waits extend the
tenure, and so the wait: a leader's Binding may wait for the rate limiter as long as it
leads, as kube-scheduler's does. A write already sent when the tenure ends
is left to finish: the server may carry it out whatever the client does, and the lease cannot
pass to another replica for leaseDuration - renewDeadline more seconds, which is the margin
such a request has (docs/architecture.md argues it in full). Cutting it off would only lose
its answer: a Binding made that way would leave its pod bound with no Scheduled Event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Protocol
from typing import TypeVar

from scheduler.cluster.send_gate import gated
from scheduler.cluster.write_guard import GuardedClusterAPI
from scheduler.cluster.write_guard import Write
from scheduler.core.clock_deadline import ClockDeadline
from scheduler.framework.clock import Clock
from scheduler.framework.errors import APIError
from scheduler.framework.handle import ClusterAPI

_T = TypeVar("_T")

# The status of the APIError a fenced write fails with; no HTTP request was made.
NOT_LEADING = 0


class Tenure(Protocol):
    def tenure_remaining(self, now: float) -> float:
        """Seconds this process may still act as the leader; 0 when it may not."""
        ...


class NotLeadingError(APIError):
    def __init__(self, what: str) -> None:
        super().__init__(NOT_LEADING, f"{what}: not sent, this replica does not hold the lease")


def _fenced_write(write: Write) -> str | None:
    """How a fenced write is named in its NotLeadingError; None for one that needs no fence."""
    # A status condition or nomination decides no placement; it needs no fence.
    return None if write.call == "patch_pod_status" else write.description


class FencedClusterAPI(GuardedClusterAPI[ClusterAPI]):
    """A `ClusterAPI` whose writes are bounded by the leader's tenure."""

    def __init__(self, api: ClusterAPI, tenure: Tenure, clock: Clock) -> None:
        super().__init__(api)
        self._tenure = tenure
        self._clock = clock

    async def _guard(self, write: Write, send: Callable[[], Awaitable[None]]) -> None:
        what = _fenced_write(write)
        if what is None:
            await send()
        else:
            await self._within_tenure(what, send)

    async def _within_tenure(self, what: str, call: Callable[[], Awaitable[_T]]) -> _T:
        remaining = self._tenure.tenure_remaining(self._clock.now())
        if remaining <= 0:
            raise NotLeadingError(what)
        sent = False

        def gate(method: str) -> None:
            nonlocal sent
            if method == "GET":
                return  # a read within the call (settling an uncertain Binding, say)
            if self._tenure.tenure_remaining(self._clock.now()) <= 0:
                raise NotLeadingError(what)
            sent = True

        with gated(gate):
            work = asyncio.ensure_future(call())

        def unsent() -> bool:
            # A write on the wire is left to finish: its answer says what happened. One still
            # waiting to be sent (for the rate limiter, say) never will be.
            return not sent

        def extended() -> float:
            return self._tenure.tenure_remaining(self._clock.now())

        with ClockDeadline(
            self._clock, remaining, work, may_cancel=unsent, remaining=extended
        ) as deadline:
            try:
                return await work
            except asyncio.CancelledError:
                if deadline.passed:
                    raise NotLeadingError(what) from None
                raise
