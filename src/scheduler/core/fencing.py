"""No write that only the leader may make without proof of holding the lease.

Bindings, preemption evictions and the writes plugins make in PreBind change what other
replicas would decide; made by a replica that has lost the lease, they double-book a node. The
fenced API lets such a write start only while the lease holder's tenure lasts
(`LeaderElector.tenure_remaining`), and abandons it if the tenure ends while it still waits
(for the client's rate limiter, say), so nothing is sent afterwards. A write sent and still
unanswered when the tenure ends is abandoned client-side; the server may still carry it out,
and the lease cannot pass to another replica for leaseDuration - renewDeadline more seconds,
which is the margin such a request has (docs/architecture.md argues it in full).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from scheduler.framework.clock import Clock
from scheduler.framework.errors import APIError
from scheduler.framework.handle import ClusterAPI
from scheduler.objects.pod import Pod

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


class FencedClusterAPI:
    """A `ClusterAPI` whose writes are bounded by the leader's tenure."""

    def __init__(self, api: ClusterAPI, tenure: Tenure, clock: Clock) -> None:
        self._api = api
        self._tenure = tenure
        self._clock = clock

    async def bind(self, pod: Pod, node_name: str) -> None:
        api = self._api
        await self._within_tenure(f"binding of {pod.key}", lambda: api.bind(pod, node_name))

    async def delete_pod(self, namespace: str, name: str, uid: str = "") -> None:
        api = self._api
        what = f"deletion of {namespace}/{name}"
        await self._within_tenure(what, lambda: api.delete_pod(namespace, name, uid))

    async def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        # A status condition or nomination decides no placement; it needs no fence.
        await self._api.patch_pod_status(namespace, name, patch)

    async def patch_object(
        self, resource: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None:
        api = self._api
        what = f"patch of {resource} {namespace}/{name}"
        await self._within_tenure(what, lambda: api.patch_object(resource, namespace, name, patch))

    async def _within_tenure(self, what: str, call: Callable[[], Awaitable[_T]]) -> _T:
        remaining = self._tenure.tenure_remaining(self._clock.now())
        if remaining <= 0:
            raise NotLeadingError(what)
        work = asyncio.ensure_future(call())
        expired = False

        def expire() -> None:
            nonlocal expired
            # Cancelling stops a request still waiting to be sent; one already on the wire is
            # cut off client-side only, and the caller learns it may or may not have happened.
            expired = True
            work.cancel()

        timer = self._clock.call_later(remaining, expire)
        try:
            return await work
        except asyncio.CancelledError:
            if expired:
                raise NotLeadingError(what) from None
            raise
        finally:
            timer.cancel()
