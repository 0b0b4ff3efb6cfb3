"""IPAllocation: give each annotated pod an address from an IPPool of its network before it
is bound, and never one address to two pods.

Reserve picks an address against this process's view (the pools' status plus addresses in
flight); PreBind writes it into the pool's status with the pool's resourceVersion (a conflict
re-reads and picks again), then writes it to the pod's annotations; Unreserve, a deleted pod
and the leader's periodic check give it back. See this package's README for the crash story.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugins.ip_allocation.annotations import address_patch
from plugins.ip_allocation.annotations import requested_network
from plugins.ip_allocation.args import IPAllocationArgs
from plugins.ip_allocation.hints import ip_allocation_events
from plugins.ip_allocation.ledger import Held
from plugins.ip_allocation.ledger import Ledger
from plugins.ip_allocation.ledger import choose_address
from plugins.ip_allocation.metrics import IPAllocationCounts
from plugins.ip_allocation.pool import IP_POOLS
from plugins.ip_allocation.pool import IPPool
from plugins.ip_allocation.pool import PoolError
from plugins.ip_allocation.pool import parse_pool
from plugins.ip_allocation.reach import Reach
from plugins.ip_allocation.release import Releaser
from plugins.ip_allocation.writes import PoolWriteError
from plugins.ip_allocation.writes import PoolWriters
from plugins.ip_allocation.writes import WriteContext
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import FilterBatch
from scheduler.framework import Handle
from scheduler.framework import MetricSamples
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PreFilterExtensions
from scheduler.framework import PreFilterResult
from scheduler.framework import Rows
from scheduler.framework import Status
from scheduler.framework import get_logger
from scheduler.framework.errors import APIError

_log = get_logger(__name__)

PRE_FILTER_STATE_KEY = "PreFilterIPAllocation"
WRITE_ATTEMPTED_KEY = "IPAllocation/pool-write-attempted"


def _not_served(pod: Pod) -> str:
    return f'no IPPool of network "{requested_network(pod)}" with a free address serves the node'


class IPAllocation:
    name = "IPAllocation"

    def __init__(self, args: IPAllocationArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else IPAllocationArgs()
        self._handle = handle
        self._ledger = Ledger()
        self._counts = IPAllocationCounts(handle.profile_name)
        self._writers = PoolWriters(
            WriteContext(
                handle.api,
                handle.clock,
                lambda pool, uid: self._ledger.taken_in(pool, besides=uid),
                self._args.max_conflict_retries,
                self._counts,
            )
        )
        self._releaser = Releaser(handle, self._ledger, self._writers, self._args, self._counts)
        # Parsed pools by name, with the resourceVersion they were parsed at.
        self._parsed: dict[str, tuple[str, IPPool | PoolError]] = {}

    # ---- the pools -------------------------------------------------------------------------

    def _pools(self, network: str) -> tuple[list[IPPool], list[str]]:
        """Readable pools of `network` by name, and why each unreadable pool is unusable."""
        pools, problems = [], []
        listed = self._handle.lister(IP_POOLS).list()
        if len(self._parsed) > len(listed):
            # Pools were deleted: forget them.
            names = {str((raw.get("metadata") or {}).get("name") or "") for raw in listed}
            self._parsed = {k: v for k, v in self._parsed.items() if k in names}
        for raw in listed:
            pool = self._parse(raw)
            if isinstance(pool, PoolError):
                problems.append(str(pool))
                continue
            if pool.network == network:
                self._ledger.forget_confirmed(pool)
                pools.append(pool)
        pools.sort(key=lambda p: p.name)
        return pools, problems

    def _parse(self, raw: Mapping[str, Any]) -> IPPool | PoolError:
        """The pool, parsed once per version of the object (pools are read on every cycle);
        an unusable one is logged once per version."""
        meta = raw.get("metadata") or {}
        name, version = str(meta.get("name") or ""), str(meta.get("resourceVersion") or "")
        known = self._parsed.get(name)
        if known is not None and known[0] == version and version:
            return known[1]
        try:
            parsed: IPPool | PoolError = parse_pool(raw)
        except PoolError as exc:
            parsed = exc
            _log.warning("Ignoring an unusable IPPool", err=str(exc))
        self._parsed[name] = (version, parsed)
        return parsed

    def _free_address(self, pool: IPPool, uid: str) -> str | None:
        return choose_address(pool, self._ledger.taken_in(pool.name, besides=uid), uid)

    # ---- PreFilter / Filter ----------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        network = requested_network(pod)
        if not network:
            return None, Status.skip()
        pools, problems = self._pools(network)
        usable = [p for p in pools if self._free_address(p, pod.uid) is not None]
        if not usable:
            detail = "; ".join(problems)
            if not pools:
                reason = f'no IPPool serves network "{network}"'
            else:
                reason = f'every IPPool of network "{network}" is out of addresses'
            return None, Status.unresolvable(f"{reason}{'; ' + detail if detail else ''}")
        state.write(PRE_FILTER_STATE_KEY, Reach.of(usable))
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        reach = state.get(PRE_FILTER_STATE_KEY, Reach)
        node = node_info.node
        if reach is None or node is None or reach.serves(node.name, node.labels):
            return SUCCESS
        return Status.unresolvable(_not_served(pod))

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        reach = state.get(PRE_FILTER_STATE_KEY, Reach)
        if reach is None:
            return FilterBatch.all_pass(len(rows))
        return FilterBatch.reject_where(
            ~reach.served_rows(table, rows), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, _not_served(pod)
        )

    # ---- Reserve / Unreserve ---------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        network = requested_network(pod)
        if not network:
            return SUCCESS
        info = self._handle.node_info(node_name)
        labels = info.node.labels if info is not None and info.node is not None else {}
        pools = [p for p in self._pools(network)[0] if p.serves(node_name, labels)]
        # The address a pod already owns (an earlier attempt's write) is taken again first.
        pools.sort(key=lambda p: p.owned_by(pod.uid) is None)
        for pool in pools:
            address = self._free_address(pool, pod.uid)
            if address is not None:
                self._ledger.hold(Held(pool.name, address, pod.uid))
                return SUCCESS
        return Status.unschedulable(
            f'no free address in the IPPools of network "{network}" that serve node {node_name}'
        )

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        held = self._ledger.drop(pod.uid)
        if held is not None and state.get(WRITE_ATTEMPTED_KEY, bool):
            # The write may have landed even if it failed: release what the pod holds, if any.
            self._releaser.release_after_failure(pod, held.pool, held.address)

    # ---- PreBind ---------------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Work for a pod that asks for an address."""
        return SUCCESS if requested_network(pod) else Status.skip()

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if not requested_network(pod):
            return Status.skip()
        held = self._ledger.held_by(pod.uid)
        if held is None:
            return Status.from_error(f"no address was reserved for pod {pod.key}")
        try:
            state.write(WRITE_ATTEMPTED_KEY, True)
            address = await self._writers(held.pool).allocate(pod.uid, pod.key, held.address)
            held.address = address
            held.persisted = True
            await self._handle.api.patch_object(
                "pods", pod.namespace, pod.name, address_patch(held.pool, address)
            )
        except (PoolWriteError, PoolError, APIError) as exc:
            self._counts.allocation("failed")
            message = f"allocating an address from IPPool {held.pool!r} failed: {exc}"
            self._handle.record_event(
                pod,
                event_type="Warning",
                reason="IPAllocationFailed",
                action="Allocating",
                note=message,
            )
            return Status.from_error(message)
        self._counts.allocation("allocated")
        _log.debug("Address allocated", pod=pod.key, node=node_name, address=address)
        return SUCCESS

    def metric_samples(self) -> MetricSamples:
        return self._counts.metric_samples()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return ip_allocation_events()
