"""Giving addresses back: right after a failed binding cycle, and periodically on the leader
for every allocation no pod uses any more (`reconcile`). Both run as background work, off the
scheduling path, and delete an allocation only while it still names the same pod."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugins.ip_allocation.annotations import carried_address
from plugins.ip_allocation.args import IPAllocationArgs
from plugins.ip_allocation.ledger import Ledger
from plugins.ip_allocation.metrics import IPAllocationCounts
from plugins.ip_allocation.pool import IP_POOLS
from plugins.ip_allocation.pool import IPPool
from plugins.ip_allocation.pool import PoolError
from plugins.ip_allocation.pool import parse_pool
from plugins.ip_allocation.reconcile import leftovers
from plugins.ip_allocation.writes import PoolWriteError
from plugins.ip_allocation.writes import PoolWriters
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework import get_logger
from scheduler.framework.errors import APIError
from scheduler.framework.errors import NotFoundError

_log = get_logger(__name__)

PODS = "pods"
UID_INDEX = "IPAllocation/uid"
# A release that meets API errors is tried again this many times, this far apart, before the
# periodic reconcile is left to finish it.
RELEASE_ATTEMPTS = 5
RELEASE_RETRY_SECONDS = 1.0


def _uid(raw: Mapping[str, Any]) -> str | None:
    return str((raw.get("metadata") or {}).get("uid") or "") or None


class Releaser:
    def __init__(
        self,
        handle: Handle,
        ledger: Ledger,
        writers: PoolWriters,
        args: IPAllocationArgs,
        counts: IPAllocationCounts,
    ) -> None:
        self._handle = handle
        self._ledger = ledger
        self._writers = writers
        self._args = args
        self._counts = counts
        self.reconciled = 0
        # Only the replica that schedules reconciles, from when it starts to, not from its
        # first annotated pod: leftovers of a crash are released with no pod pending.
        handle.start_when_leading("ip-pool-reconcile", self._reconcile_loop)

    # ---- after a failed binding cycle ------------------------------------------------------

    def release_after_failure(self, pod: Pod, pool: str, address: str) -> None:
        async def work() -> None:
            for attempt in range(RELEASE_ATTEMPTS):
                if attempt:
                    await self._handle.clock.sleep(RELEASE_RETRY_SECONDS * attempt)
                try:
                    if await self._pod_runs_with(pod, pool, address):
                        return
                    await self._release(pool, address, pod.uid, "binding failed")
                    return
                except (APIError, PoolWriteError, PoolError) as exc:
                    _log.warning(
                        "Releasing an address failed; will retry",
                        pod=pod.key,
                        address=address,
                        err=str(exc),
                    )

        self._handle.start_background("ip-release", work, one_off=True)

    async def _pod_runs_with(self, pod: Pod, pool: str, address: str) -> bool:
        """Whether the pod, as the API server has it now, is bound carrying this address:
        then another scheduler (a previous leader) placed it with it, and it stays."""
        try:
            raw = await self._handle.api.get(PODS, pod.namespace, pod.name)
        except NotFoundError:
            return False
        same_pod = _uid(raw) == pod.uid
        bound = bool((raw.get("spec") or {}).get("nodeName"))
        return same_pod and bound and carried_address(raw) == (pool, address)

    async def _release(self, pool: str, address: str, uid: str, reason: str) -> None:
        if await self._writers(pool).release(uid, address):
            self._counts.allocation("released")
            _log.info("Address released", pool=pool, address=address, uid=uid, reason=reason)

    # ---- the leader's periodic check -------------------------------------------------------

    def _readable_pools(self) -> list[IPPool]:
        pools = []
        for raw in self._handle.lister(IP_POOLS).list():
            try:
                pools.append(parse_pool(raw))
            except PoolError:
                continue  # reported where the pool is used
        return pools

    async def reconcile_once(self) -> int:
        """Release every leftover allocation; returns how many were released."""
        pods = self._handle.lister(PODS)
        # Here, not at construction: the pod informer's store does not exist yet then.
        pods.add_index(UID_INDEX, _uid)
        pods_of_uid: dict[str, Mapping[str, Any]] = {}
        pools = self._readable_pools()
        for pool in pools:
            for allocation in pool.allocations.values():
                found = pods.by_index(UID_INDEX, allocation.uid)
                if found:
                    pods_of_uid[allocation.uid] = found[0]
        in_flight = {
            a.uid
            for pool in pools
            for a in pool.allocations.values()
            if self._ledger.held_by(a.uid) is not None
        }
        released = 0
        for leftover in leftovers(pools, pods_of_uid, in_flight):
            try:
                await self._release(leftover.pool, leftover.address, leftover.uid, leftover.reason)
            except (APIError, PoolWriteError, PoolError) as exc:
                _log.warning("Releasing a leftover address failed", err=str(exc))
                continue
            released += 1
        self.reconciled += 1
        return released

    async def _reconcile_loop(self) -> None:
        while True:
            await self.reconcile_once()
            await self._handle.clock.sleep(self._args.reconcile_interval_seconds)
