"""A pool's writes from this process: one at a time, many pods' changes in each.

Every write carries the resourceVersion of the pool it was computed from, so the API server
refuses it (409) if anyone changed the pool in between; the pool is then re-read and the
choices made again, a bounded number of times. One pool object takes every allocation of its
network, so writers of one process would refuse each other's writes endlessly if each wrote
alone: instead, the first PreBind (or release) to arrive becomes the writer and writes what
every other one has asked for meanwhile, in one patch per round, until nothing is left; the
others wait for their outcome. (Plugins have no event primitives but the Clock, so a waiter
looks for its outcome from time to time, a little less often the longer it waits.)

A write that got no answer may have been made: releases delete by owner, so the release after
a failed binding cycle is safe to run whether or not its allocation landed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plugins.ip_allocation.ledger import choose_address
from plugins.ip_allocation.metrics import IPAllocationCounts
from plugins.ip_allocation.pool import IP_POOLS
from plugins.ip_allocation.pool import IPPool
from plugins.ip_allocation.pool import parse_pool
from scheduler.framework import Clock
from scheduler.framework import ClusterAPI
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError

# A waiter looks again after this, then twice as long each time up to the cap: a burst of
# pods waiting on one slow write must not turn into a storm of wake-ups.
OUTCOME_POLL_SECONDS = 0.02
OUTCOME_POLL_CAP_SECONDS = 0.32
# Changes in one patch at most; what is left goes in the next round.
BATCH_LIMIT = 256


class PoolWriteError(Exception):
    """A pool write gave up: exhausted, gone, or conflicts past the retry budget."""


@dataclass(frozen=True, slots=True)
class _Allocate:
    uid: str
    pod_key: str
    preferred: str


@dataclass(frozen=True, slots=True)
class _Release:
    uid: str
    address: str


_Request = _Allocate | _Release
_Outcome = str | bool | BaseException
TakenElsewhere = Callable[[str, str], set[str]]
"""`taken(pool, uid)`: addresses of the pool this process holds for pods other than `uid`."""


@dataclass(frozen=True, slots=True)
class WriteContext:
    """What every pool writer of one plugin instance shares."""

    api: ClusterAPI
    clock: Clock
    taken_elsewhere: TakenElsewhere
    retries: int
    counts: IPAllocationCounts


class PoolWriter:
    def __init__(self, context: WriteContext, pool: str) -> None:
        self._context = context
        self._api = context.api
        self._pool = pool
        self._pending: dict[_Request, None] = {}
        self._outcomes: dict[_Request, _Outcome] = {}
        self._writing = False

    async def allocate(self, uid: str, pod_key: str, preferred: str) -> str:
        """Write an allocation for pod `uid` (the address the status already gives it wins,
        then `preferred` if free, then the first free one) and return its address."""
        outcome = await self._submit(_Allocate(uid, pod_key, preferred))
        assert isinstance(outcome, str)
        return outcome

    async def release(self, uid: str, address: str) -> bool:
        """Remove `address` from the status if pod `uid` still holds it; True if removed."""
        outcome = await self._submit(_Release(uid, address))
        return bool(outcome)

    async def _submit(self, request: _Request) -> str | bool:
        self._pending[request] = None
        if not self._writing:
            self._writing = True
            try:
                while self._pending:
                    await self._round()
            finally:
                self._writing = False
        pause = OUTCOME_POLL_SECONDS
        while request not in self._outcomes:
            await self._context.clock.sleep(pause)
            pause = min(pause * 2, OUTCOME_POLL_CAP_SECONDS)
        outcome = self._outcomes.pop(request)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def _round(self) -> None:
        batch = list(self._pending)[:BATCH_LIMIT]
        for request in batch:
            del self._pending[request]
        try:
            outcomes = await self._write(batch)
        except Exception as exc:
            # Every waiter hears how its request ended, whatever went wrong (an API error, an
            # unreadable pool); each raises it in its own PreBind or release.
            outcomes = dict.fromkeys(batch, exc)
        self._outcomes.update(outcomes)

    async def _write(self, batch: list[_Request]) -> dict[_Request, _Outcome]:
        for _ in range(self._context.retries):
            try:
                pool = parse_pool(await self._api.get(IP_POOLS, "", self._pool))
            except NotFoundError:
                gone = PoolWriteError(f'IPPool "{self._pool}" no longer exists')
                return {r: (False if isinstance(r, _Release) else gone) for r in batch}
            outcomes, changes = self._decide(pool, batch)
            if not changes:
                return outcomes
            patch: dict[str, Any] = {
                "metadata": {"resourceVersion": pool.resource_version},
                "status": {"allocations": changes},
            }
            try:
                await self._api.patch_object(IP_POOLS, "", self._pool, patch, subresource="status")
            except ConflictError:
                self._context.counts.write_conflict()
                continue
            return outcomes
        failed = PoolWriteError(
            f'IPPool "{self._pool}" changed under {self._context.retries} attempts to write; '
            "giving up for now"
        )
        return dict.fromkeys(batch, failed)

    def _decide(
        self, pool: IPPool, batch: list[_Request]
    ) -> tuple[dict[_Request, _Outcome], dict[str, Any]]:
        """Each request's outcome against `pool`, and the status changes that make them so."""
        outcomes: dict[_Request, _Outcome] = {}
        changes: dict[str, Any] = {}
        for request in batch:
            if isinstance(request, _Release):
                current = pool.allocations.get(request.address)
                mine = current is not None and current.uid == request.uid
                if mine:
                    changes[request.address] = None
                outcomes[request] = mine
                continue
            taken = self._context.taken_elsewhere(pool.name, request.uid) | set(changes)
            address = choose_address(pool, taken, request.uid, request.preferred)
            if address is None:
                outcomes[request] = PoolWriteError(f'IPPool "{pool.name}" has no free address')
                continue
            if address not in pool.allocations:
                changes[address] = {"uid": request.uid, "pod": request.pod_key}
            outcomes[request] = address
        return outcomes, changes


class PoolWriters:
    """One writer per pool, made on first use."""

    def __init__(self, context: WriteContext) -> None:
        self._context = context
        self._writers: dict[str, PoolWriter] = {}

    def __call__(self, pool: str) -> PoolWriter:
        writer = self._writers.get(pool)
        if writer is None:
            writer = self._writers[pool] = PoolWriter(self._context, pool)
        return writer
