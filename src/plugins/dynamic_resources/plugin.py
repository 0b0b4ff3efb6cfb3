"""DynamicResources: pods get the devices their ResourceClaims ask for. Claims must exist
(PreEnqueue), their classes too (PreFilter); a node fits if the devices its ResourceSlices
publish can satisfy every pending claim and every allocated claim may be used there (Filter);
the devices are held in memory at Reserve and written to the claims at PreBind."""

from __future__ import annotations

import uuid
from functools import partial

import numpy as np

from plugins.dynamic_resources import messages
from plugins.dynamic_resources.allocated_devices import AllocatedDevices
from plugins.dynamic_resources.allocator import Chosen
from plugins.dynamic_resources.allocator import FilterTimeoutError
from plugins.dynamic_resources.allocator import Probe
from plugins.dynamic_resources.allocator import allocate
from plugins.dynamic_resources.allocator import allocated_first_available_score
from plugins.dynamic_resources.allocator import allocation_result
from plugins.dynamic_resources.allocator import first_available_score
from plugins.dynamic_resources.args import DynamicResourcesArgs
from plugins.dynamic_resources.binding_conditions import BindingFailedError
from plugins.dynamic_resources.binding_conditions import claim_ready
from plugins.dynamic_resources.binding_conditions import claim_timed_out
from plugins.dynamic_resources.binding_conditions import wait_until_bound
from plugins.dynamic_resources.binding_conditions import waits_for_binding
from plugins.dynamic_resources.candidates import CandidateCache
from plugins.dynamic_resources.claims import ClaimProblemError
from plugins.dynamic_resources.claims import PodClaim
from plugins.dynamic_resources.claims import has_claims
from plugins.dynamic_resources.claims import resolve_pod_claims
from plugins.dynamic_resources.counters import CounterLedger
from plugins.dynamic_resources.details import node_details
from plugins.dynamic_resources.device_totals import device_count
from plugins.dynamic_resources.extended_claim import ExtendedResources
from plugins.dynamic_resources.extended_claim import claim_for_node
from plugins.dynamic_resources.extended_claim import extended_resources
from plugins.dynamic_resources.extended_writes import ExtendedClaimError
from plugins.dynamic_resources.extended_writes import create_claim
from plugins.dynamic_resources.extended_writes import delete_claim
from plugins.dynamic_resources.extended_writes import record_in_pod
from plugins.dynamic_resources.free_devices import FreeDeviceColumns
from plugins.dynamic_resources.freeing import ClaimToFree
from plugins.dynamic_resources.hints import after_claim_change
from plugins.dynamic_resources.hints import after_pod_change
from plugins.dynamic_resources.inventory import Inventory
from plugins.dynamic_resources.inventory import InventoryView
from plugins.dynamic_resources.names import DEVICE_CLASSES
from plugins.dynamic_resources.names import DEVICE_TAINT_RULES
from plugins.dynamic_resources.names import RESOURCE_CLAIMS
from plugins.dynamic_resources.names import RESOURCE_SLICES
from plugins.dynamic_resources.prebind import ClaimWriteError
from plugins.dynamic_resources.prebind import reserve_claim
from plugins.dynamic_resources.prebind import unreserve_claim
from plugins.dynamic_resources.requests import ClaimPlan
from plugins.dynamic_resources.requests import plan_claim
from plugins.dynamic_resources.selectors import AllocationError
from plugins.dynamic_resources.selectors import DeviceMatcher
from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import ExtendedVariant
from plugins.dynamic_resources.state import StateData
from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from plugins.helpers.extended_resources import DEVICE_TOTALS_KEY
from plugins.helpers.extended_resources import DeviceClassResolver
from plugins.helpers.extended_resources import DeviceTotals
from plugins.helpers.normalize import DefaultNormalizer
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterBatch
from scheduler.framework import Handle
from scheduler.framework import Lister
from scheduler.framework import Node
from scheduler.framework import NodeInfo
from scheduler.framework import NodeStatusReader
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PostFilterResult
from scheduler.framework import PreFilterResult
from scheduler.framework import Rows
from scheduler.framework import Scores
from scheduler.framework import SignFragments
from scheduler.framework import Status
from scheduler.framework.errors import APIError
from scheduler.framework.errors import error_text
from scheduler.objects.labels import SelectorError
from scheduler.objects.node_selector import parse_node_selector
from scheduler.objects.raw import RawObject


def _no_allocation(inventory: Inventory, node: Node) -> str:
    """Why no allocation was found on the node: an invalid pool it sees is named as the cause."""
    if any(reason == messages.POOL_INVALID for _, reason in inventory.unusable_pools_for(node)):
        return messages.INVALID_POOLS
    return messages.CANNOT_ALLOCATE


class DynamicResources:
    name = "DynamicResources"

    def __init__(self, args: DynamicResourcesArgs | None, handle: Handle) -> None:
        self._handle = handle
        args = args or DynamicResourcesArgs()
        self._filter_timeout = float(args.filter_timeout)
        self._binding_timeout = float(args.binding_timeout)
        self._allocated = AllocatedDevices(self._claims)
        self._candidates = CandidateCache(
            InventoryView(
                lambda: handle.lister(RESOURCE_SLICES), lambda: handle.lister(DEVICE_TAINT_RULES)
            ),
            DeviceMatcher(),
        )
        self._normalizer = DefaultNormalizer()
        self._free_columns = FreeDeviceColumns()
        self._device_classes = DeviceClassResolver(lambda: handle.lister(DEVICE_CLASSES))

    def _claims(self) -> Lister:
        return self._handle.lister(RESOURCE_CLAIMS)

    # ---- PreEnqueue -------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status:
        if not has_claims(pod):
            return SUCCESS
        try:
            resolve_pod_claims(pod, self._claims())
        except ClaimProblemError as problem:
            return Status.unresolvable(str(problem))
        return SUCCESS

    # ---- PreFilter ---------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        data = StateData()
        state.write(STATE_KEY, data)
        claims: list[PodClaim] = []
        if has_claims(pod):
            try:
                claims = resolve_pod_claims(pod, self._claims())
            except ClaimProblemError as problem:
                return None, Status.unresolvable(str(problem))
        extended = extended_resources(pod, self._device_classes, self._claims(), self._new_uid)
        if not claims and extended is None:
            return None, Status.skip()
        self._allocated.sync()
        classes = self._handle.lister(DEVICE_CLASSES)
        for index, claim in enumerate(claims):
            status = self._prepare_claim(data, pod, index, claim, classes)
            if not status.is_success:
                return None, status
        data.user_plans = len(data.plans)
        data.extended = extended
        if extended is not None and not extended.stale:
            status = self._prepare_extended(data, extended, table)
            if not status.is_success:
                return None, status
        if data.plans:
            data.inventory = self._candidates.refresh()
            plans = data.plans
            # Counting the devices that could each be given decides a node when they do not
            # share counters (then no pick shuts out another; a shared device's capacity is
            # its own), or when one device is wanted; an unusable pool needs its own text.
            inventory = data.inventory
            data.counted = (
                len(plans) == 1
                and len(plans[0].requests) == 1
                and plans[0].simple
                and (not inventory.counters or plans[0].requests[0].alternatives[0].count == 1)
                and not inventory.unusable
                and not data.extended_varies
                and (extended is None or extended.all_provided)
            )
        data.claims = claims
        if extended is not None:
            # NodeResourcesFit and BalancedAllocation score the resources by these devices.
            inventory = data.inventory or self._candidates.refresh()
            count = device_count(self._device_classes, self._candidates, inventory, self._allocated)
            state.write(DEVICE_TOTALS_KEY, DeviceTotals(frozenset(extended.classes), count))
        return None, SUCCESS

    def _prepare_extended(
        self, data: StateData, extended: ExtendedResources, table: NodeTable
    ) -> Status:
        """The extended claim for nodes that offer none of the provided resources through a
        device plugin (all nodes, usually), and whether any node does."""
        provided = frozenset(extended.classes)
        for resource in provided:
            column = table.resource_column(resource)
            if column is not None and bool(np.any(table.allocatable[:, column] > 0)):
                data.extended_varies = True
        try:
            data.plans.append(self._extended_variant(data, extended, provided).plan)
        except ClaimProblemError as problem:
            return Status.unresolvable(str(problem))
        except AllocationError as exc:
            return Status.from_error(str(exc))
        return SUCCESS

    def _extended_variant(
        self, data: StateData, extended: ExtendedResources, resources: frozenset[str]
    ) -> ExtendedVariant:
        """The extended claim for nodes leaving `resources` to devices; raises
        ClaimProblemError or AllocationError as `plan_claim` does."""
        found = data.extended_variants.get(resources)
        if found is None:
            claim, mappings = claim_for_node(extended, resources)
            plan = plan_claim(PodClaim("", claim), self._handle.lister(DEVICE_CLASSES))
            found = data.extended_variants[resources] = ExtendedVariant(plan, mappings)
        return found

    def _plans_on(self, data: StateData, node: Node) -> list[ClaimPlan]:
        """The claims to allocate on `node`: the pod's own, and the extended claim the node
        needs (none where device plugins offer all the provided resources)."""
        extended = data.extended
        if extended is None or extended.stale or not data.extended_varies:
            return data.plans
        resources = extended.left_to_devices(node.allocatable)
        own = data.plans[: data.user_plans]
        if not resources:
            return own
        return [*own, self._extended_variant(data, extended, resources).plan]

    def _prepare_claim(
        self, data: StateData, pod: Pod, index: int, claim: PodClaim, classes: Lister
    ) -> Status:
        allocation = claim.allocation
        if allocation is not None:
            # However many consumers it has, an allocated claim is not refused here: v1.36
            # sets no limit on sharing, and the server refuses a reservation past its own.
            if allocation.get("nodeSelector"):
                try:
                    selector = parse_node_selector(allocation["nodeSelector"])
                except (SelectorError, ValueError, TypeError, KeyError) as exc:
                    return Status.from_error(str(exc))
                if selector is not None:
                    data.available_on[index] = selector
            if waits_for_binding(allocation) and not self._may_still_bind(claim):
                data.unbindable.add(index)
            return SUCCESS
        if self._allocated.has_pending_allocation(claim.uid):
            return Status.unresolvable(messages.pending_allocation(claim.namespace, claim.name))
        try:
            plan = plan_claim(claim, classes)
            for request in plan.requests:
                for alternative in request.alternatives:
                    self._candidates.matcher.check(alternative.selector_sets)
        except ClaimProblemError as problem:
            return Status.unresolvable(str(problem))
        except AllocationError as exc:
            return Status.from_error(str(exc))
        data.plans.append(plan)
        data.plan_claims.append(index)
        return SUCCESS

    def _may_still_bind(self, claim: PodClaim) -> bool:
        try:
            ready = claim_ready(claim.claim)
        except BindingFailedError:
            return False
        return ready or not claim_timed_out(
            claim.claim, self._handle.clock.wall(), self._binding_timeout
        )

    def pre_filter_extensions(self) -> None:
        return None

    # ---- Filter ------------------------------------------------------------------------

    def _state(self, state: CycleState) -> StateData | Status:
        found = state.get(STATE_KEY, StateData)
        if found is None:
            return Status.missing_state(STATE_KEY, lead="reading")
        return found

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        data = self._state(state)
        if isinstance(data, Status):
            return data
        if not data.has_work:
            return SUCCESS
        return self._filter_node(data, data.inventory or Inventory(()), node_info.node)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        data = self._state(state)
        if not isinstance(data, Status) and not data.has_work:
            return FilterBatch.all_pass(len(rows))
        if isinstance(data, Status):
            return FilterBatch.uniform(data, len(rows))
        if data.extended is not None and data.extended.stale:
            return FilterBatch.uniform(
                Status.unresolvable(messages.STALE_EXTENDED_CLAIM), len(rows)
            )
        infos = table.node_infos
        inventory = data.inventory or Inventory(())
        if data.counted and not data.available_on and not data.unbindable:
            return self._count_rows(data, inventory, table, rows)
        return FilterBatch.from_statuses(
            [self._filter_node(data, inventory, infos[r].node) for r in rows.tolist()]
        )

    def _count_rows(
        self, data: StateData, inventory: Inventory, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        """The common case in bulk: one plain request, decided by counting free devices."""
        alternative = data.plans[0].requests[0].alternatives[0]
        counts = self._free_columns.counts(
            table,
            (alternative.cache_key, self._candidates.version),
            partial(self._candidates.untainted_for_node, inventory, alternative),
            self._allocated,
            self._probe(inventory).free_test(alternative),
        )
        if self._candidates.failing_nodes(alternative):
            # A selector failed on a device somewhere: whether the count meets it before it
            # has enough free devices is the per-node form's to say, node by node.
            infos = table.node_infos
            return FilterBatch.from_statuses(
                [self._filter_node(data, inventory, infos[r].node) for r in rows.tolist()]
            )
        rejected = counts[rows] < alternative.count
        return FilterBatch.reject_where(
            rejected, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, messages.CANNOT_ALLOCATE
        )

    def _filter_node(self, data: StateData, inventory: Inventory, node: Node | None) -> Status:
        if node is None:
            return Status.from_error(NODE_NOT_FOUND_MESSAGE)
        extended = data.extended
        if extended is not None:
            if extended.stale:
                return Status.unresolvable(messages.STALE_EXTENDED_CLAIM)
            if extended.unprovided(node.allocatable):
                return Status.unresolvable(messages.CANNOT_FIT_RESOURCE)
        chosen: list[list[Chosen]] | None = None
        try:
            plans = self._plans_on(data, node)
        except ClaimProblemError as problem:
            return Status.unresolvable(str(problem))
        except AllocationError as exc:
            return Status.from_error(str(exc))
        if plans:
            try:
                if data.counted:
                    if not self._enough_free(data.plans[0], inventory, node):
                        return Status.unresolvable(messages.CANNOT_ALLOCATE)
                else:
                    chosen = self._allocate(plans, inventory, node, self._deadline())
                    if chosen is None:
                        return Status.unresolvable(_no_allocation(inventory, node))
            except FilterTimeoutError:
                # An Error, not a rejection: a timeout may pass, so the pod is retried after
                # backoff rather than parked until some event; and the node is named, as the
                # slices that made the search long are likely its own.
                return Status.from_error(messages.filter_timed_out(node.name))
            except AllocationError as exc:
                return Status.from_error(str(exc))
        unavailable = [
            i for i, where in data.available_on.items() if not where.matches(node.labels, node.name)
        ]
        unavailable += data.unbindable
        if unavailable:
            data.unavailable.update(unavailable)
            return Status.unresolvable(messages.NOT_AVAILABLE_ON_NODE)
        if chosen is not None:
            data.chosen[node.name] = chosen
        return SUCCESS

    def filter_details(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> list[str]:
        """For `explain`: what each claim found on the node, device by device."""
        data = state.get(STATE_KEY, StateData)
        node = node_info.node
        if data is None or not data.has_work or node is None:
            return []
        inventory = data.inventory or Inventory(())
        return node_details(
            data,
            self._plans_or_default(data, node),
            inventory,
            node,
            partial(self._candidates.searched, inventory, node=node),
            self._probe(inventory).refusal_test,
        )

    def _probe(self, inventory: Inventory) -> Probe:
        """Devices tested on their own against the claims allocated now."""
        allocated = self._allocated
        ledger = CounterLedger(inventory.counters, allocated.is_allocated)
        return Probe(allocated.is_taken, ledger, allocated.held_capacity)

    def _enough_free(self, plan: ClaimPlan, inventory: Inventory, node: Node) -> bool:
        """Whether the node has the request's count of free devices, taken in the order the
        search would take them; AllocationError if it meets a failing selector first."""
        alternative = plan.requests[0].alternatives[0]
        searched = self._candidates.searched(inventory, alternative, node)
        probe = self._probe(inventory)
        is_free, in_use = probe.free_test(alternative), probe.in_use_test(alternative)
        free = 0
        for device in searched.devices:
            failure = searched.failures.get(device.id)
            if failure is not None:
                if not in_use(device):
                    raise failure
            elif is_free(device):
                free += 1
                if free >= alternative.count:
                    return True
        return False

    def _deadline(self) -> float | None:
        if self._filter_timeout <= 0:
            return None
        return self._handle.clock.now() + self._filter_timeout

    def _allocate(
        self,
        plans: list[ClaimPlan],
        inventory: Inventory,
        node: Node,
        deadline: float | None,
    ) -> list[list[Chosen]] | None:
        clock = self._handle.clock

        def expired() -> bool:
            return deadline is not None and clock.now() > deadline

        unusable = inventory.unusable_pools_for(node)
        return allocate(
            plans,
            partial(self._candidates.searched, inventory, node=node),
            self._allocated.is_taken,
            CounterLedger(inventory.counters, self._allocated.is_allocated),
            self._allocated.held_capacity,
            unusable[0] if unusable else None,
            expired,
        )

    # ---- PostFilter --------------------------------------------------------------------
    #
    # Upstream frees the claim with a write PostFilter waits for, and answers that write's
    # error as an Error. The scheduler awaits PostFilter only in an attempt that awaits HTTP
    # extenders (`post_filter_awaiting`); every other attempt is synchronous, so the cache
    # stands still, and cannot wait for the API: there the same write runs as background
    # work, answered as upstream answers it when it succeeds (a refusal is logged, and the
    # claim's next change requeues the pod, as it would upstream). `explain` relies on that:
    # it cancels the background work instead of letting it write.

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        target = self._post_filter_target(state, pod)
        if isinstance(target, Status):
            return None, target
        self._handle.start_background(
            f"{target.verb}:{target.claim.namespace}/{target.claim.name}",
            target.write(self._handle),
            one_off=True,
        )
        return None, target.answer

    async def post_filter_awaiting(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        target = self._post_filter_target(state, pod)
        if isinstance(target, Status):
            return None, target
        try:
            await target.write(self._handle)()
        except APIError as exc:
            # Upstream's statusError: the server's own words, as an Error.
            return None, Status.from_error(exc.text)
        return None, target.answer

    def _post_filter_target(self, state: CycleState, pod: Pod) -> ClaimToFree | Status:
        """The claim PostFilter frees, or its answer when it frees none."""
        data = state.get(STATE_KEY, StateData)
        if data is None:
            # An earlier PreFilter plugin rejected the pod as unresolvable before this one ran.
            # Upstream answers with its cycle-state read error, which ends the PostFilter
            # chain before preemption and is appended to the FitError text as it is.
            return Status.from_error(messages.STATE_NOT_FOUND)
        if not data.has_work:
            return Status.unschedulable(messages.NO_CLAIMS_TO_DEALLOCATE)
        for index in sorted(data.unavailable, key=lambda _: self._handle.rng.random()):
            claim = data.claims[index]
            holders = claim.reserved_for
            if not holders or (len(holders) == 1 and holders[0].get("uid") == pod.uid):
                return ClaimToFree(claim, delete=False)
        extended = data.extended
        if extended is not None and extended.stale:
            # Made by an earlier attempt that did not bind the pod: deleted, it is made anew.
            return ClaimToFree(PodClaim("", extended.claim), delete=True)
        return Status.unschedulable(messages.STILL_NOT_SCHEDULABLE)

    # ---- Score -------------------------------------------------------------------------

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        data = state.get(STATE_KEY, StateData)
        if data is None or not data.plans or node_info.node is None:
            return 0, SUCCESS
        allocated = allocated_first_available_score(data.claims)
        return self._node_score(data, node_info.node, allocated), SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        data = state.get(STATE_KEY, StateData)
        scores = np.zeros(len(rows), dtype=np.int64)
        if data is None or not data.plans:
            return scores
        # Node-independent: what the pod's allocated claims add on every node.
        allocated = allocated_first_available_score(data.claims)
        infos = table.node_infos
        for i, row in enumerate(rows.tolist()):
            node = infos[row].node
            if node is not None:
                scores[i] = self._node_score(data, node, allocated)
        return scores

    def _node_score(self, data: StateData, node: Node, allocated: int) -> int:
        """Upstream scores every claim of the pod on a node that passed Filter: the allocated
        ones by their results, the pending ones by the devices Filter chose there. Where Filter
        chose none (counted free devices, or nothing to allocate on the node), no pending
        claim has a firstAvailable request."""
        chosen = data.chosen.get(node.name)
        if chosen is None:
            return allocated
        return allocated + first_available_score(self._plans_or_default(data, node), chosen)

    def _plans_or_default(self, data: StateData, node: Node) -> list[ClaimPlan]:
        """`_plans_on` where Filter built them already (they cannot fail then)."""
        try:
            return self._plans_on(data, node)
        except (ClaimProblemError, AllocationError):
            return data.plans

    def score_extensions(self) -> DefaultNormalizer:
        return self._normalizer

    # ---- Reserve / Unreserve -----------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = state.get(STATE_KEY, StateData)
        if data is None or not data.plans:
            return SUCCESS
        info = self._handle.node_info(node_name)
        node = info.node if info is not None else None
        if node is None:
            return Status.from_error(messages.ALLOCATION_NOT_FOUND)
        plans = self._plans_or_default(data, node)
        if not plans:
            return SUCCESS  # device plugins offer all the pod's extended resources here
        chosen = data.chosen.get(node_name)
        if chosen is None and data.counted:
            try:
                chosen = self._allocate(plans, self._candidates.refresh(), node, None)
            except AllocationError as exc:
                return Status.from_error(str(exc))
        if chosen is None:
            return Status.from_error(messages.ALLOCATION_NOT_FOUND)
        for plan, per_claim in zip(plans, chosen, strict=True):
            allocation = allocation_result(plan, per_claim, node_name, self._new_share_id)
            data.allocations[plan.claim.uid] = allocation
            self._allocated.signal_pending(plan.claim.uid, allocation)
        extended = data.extended
        if extended is not None and len(plans) > data.user_plans:
            resources = extended.left_to_devices(node.allocatable)
            data.extended_reserved = self._extended_variant(data, extended, resources)
        return SUCCESS

    def _new_share_id(self) -> str:
        return self._new_uid()

    def _new_uid(self) -> str:
        # From the handle's random source, so a seeded simulation writes the same ids.
        return str(uuid.UUID(int=self._handle.rng.getrandbits(128), version=4))

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        data = state.get(STATE_KEY, StateData)
        if data is None or not data.has_work:
            return
        for uid in data.allocations:
            # An allocation PreBind stored stays with its claim until the informer shows it:
            # freed now, its devices would look free to the next pod meanwhile.
            if uid not in data.written:
                self._allocated.remove_pending(uid)
        data.allocations.clear()
        created = data.extended_created
        if created is not None:
            # Made by this attempt's PreBind: it goes, so no devices stay held for the pod.
            self._allocated.remove_pending(str(created["metadata"].get("uid") or ""))
            meta = created["metadata"]
            namespace, name = str(meta.get("namespace") or ""), str(meta.get("name"))
            self._handle.start_background(
                f"delete:{namespace}/{name}",
                partial(delete_claim, self._handle, namespace, name),
                one_off=True,
            )
            data.extended_created = None
        for claim in data.claims:
            if not claim.is_reserved_for(pod) and claim.uid not in data.written:
                continue
            self._handle.start_background(
                f"unreserve:{claim.namespace}/{claim.name}",
                partial(unreserve_claim, self._handle, claim.namespace, claim.name, pod),
                one_off=True,
            )

    # ---- PreBind -----------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Work whenever the pod has claims (upstream's test, even if all are reserved)."""
        data = state.get(STATE_KEY, StateData)
        return SUCCESS if data is not None and data.has_work else Status.skip()

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = state.get(STATE_KEY, StateData)
        if data is None or not data.has_work:
            return SUCCESS
        for claim in data.claims:
            if claim.is_reserved_for(pod):
                continue
            allocation = data.allocations.get(claim.uid)
            try:
                version = await reserve_claim(self._handle, claim.claim, pod, allocation)
            except (APIError, ClaimWriteError) as exc:
                return Status.from_error(error_text(exc))
            data.written.add(claim.uid)
            if allocation is not None:
                self._allocated.mark_written(claim.uid, (claim.namespace, claim.name), version)
        claims = list(data.claims)
        if data.extended_reserved is not None:
            try:
                claims.append(await self._create_extended_claim(data, data.extended_reserved, pod))
            except (APIError, ClaimWriteError, ExtendedClaimError) as exc:
                return Status.from_error(error_text(exc))
        if not any(
            waits_for_binding(claim.allocation or data.allocations.get(claim.uid))
            for claim in claims
        ):
            return SUCCESS
        return await self._wait_for_binding(data, claims, pod, node_name)

    async def _create_extended_claim(
        self, data: StateData, variant: ExtendedVariant, pod: Pod
    ) -> PodClaim:
        """Create the extended claim Reserve allocated, record its allocation and the pod in
        it, and name it in the pod's status."""
        in_memory = variant.plan.claim.uid
        created = PodClaim("", await create_claim(self._handle, variant.plan.claim.claim))
        data.extended_created = created.claim
        # From now on the allocation in flight is known by the created claim's uid.
        allocation = data.allocations.pop(in_memory, None)
        self._allocated.rename_pending(in_memory, created.uid)
        if allocation is not None:
            data.allocations[created.uid] = allocation
        version = await reserve_claim(self._handle, created.claim, pod, allocation)
        self._allocated.mark_written(created.uid, (created.namespace, created.name), version)
        await record_in_pod(self._handle, pod, created.name, variant.mappings)
        return created

    async def _wait_for_binding(
        self, data: StateData, claims: list[PodClaim], pod: Pod, node_name: str
    ) -> Status:
        """Wait until the devices of the pod's claims are bound, as their drivers report in
        the claims' status, and record how it went."""
        self._handle.record_event(
            pod,
            event_type="Normal",
            reason="BindingConditionsPending",
            action="Scheduling",
            note=f"waiting for binding conditions for device on node {node_name}",
        )
        clock = self._handle.clock
        started = clock.now()
        # The claims the informer has shown; until then, the claim this PreBind created stands
        # for itself (not ready yet), as upstream first waits for the informer to have it.
        seen = {c.uid for c in claims if c.claim is not data.extended_created}

        def current_claims() -> list[tuple[str, str, RawObject | None]]:
            found = []
            for claim in claims:
                current = self._claims().get(claim.namespace, claim.name)
                if current is not None:
                    seen.add(claim.uid)
                elif claim.uid not in seen:
                    current = claim.claim
                found.append((claim.namespace, claim.name, current))
            return found

        # A wait cut short (the pod preempted, the scheduler stopping) is recorded as an
        # error, as upstream records its cancelled context.
        outcome, error = "error", None
        try:
            outcome, error = await wait_until_bound(current_claims, clock, self._binding_timeout)
        finally:
            self._record_wait(data, claims, outcome, clock.now() - started)
        return SUCCESS if error is None else Status.from_error(error)

    def _record_wait(
        self, data: StateData, claims: list[PodClaim], outcome: str, seconds: float
    ) -> None:
        metrics = self._handle.plugin_metrics
        profile = self._handle.profile_name
        for claim in claims:
            allocation = claim.allocation or data.allocations.get(claim.uid) or {}
            for result in (allocation.get("devices") or {}).get("results") or ():
                driver = str(result.get("driver"))
                metrics.dra_binding_conditions_wait(profile, driver, outcome, seconds)
                if result.get("bindingConditions"):
                    metrics.dra_binding_conditions_allocation(profile, driver, outcome)

    # ---- Signature --------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Claims may be shared, allocated already, or served from pools other pods draw on:
        # a pod with claims is alike no other (upstream's rule). Neither is one asking for an
        # extended resource a DeviceClass provides, whose devices come from a claim made for
        # it (upstream leaves these to NodeResourcesFit, which refuses them too).
        if has_claims(pod) or self._device_classes.provides_any(pod):
            return None
        return {}

    # ---- QueueingHints -----------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_or_update = ActionType.ADD | ActionType.UPDATE
        claims = self._claims
        return [
            # Allocatable decides which extended resources a node leaves to devices.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_CLAIM, add_or_update),
                lambda pod, old, new: after_claim_change(claims(), pod, old, new),
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                lambda pod, old, new: after_pod_change(claims(), pod, old, new),
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, add_or_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_SLICE, add_or_update)),
        ]
