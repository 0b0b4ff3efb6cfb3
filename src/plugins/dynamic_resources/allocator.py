"""Allocating a pod's pending claims on one node: every request gets its devices (the first
alternative of a firstAvailable list that works), no device twice, none already taken (unless
the request has admin access), no counter of a partitionable pool overdrawn, and every
matchAttribute constraint holds. A depth-first search that backs up when a later request cannot
be met, bounded by the filter timeout."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from enum import StrEnum
from fractions import Fraction
from functools import partial
from typing import Any

from plugins.dynamic_resources import capacity
from plugins.dynamic_resources.capacity import Amounts
from plugins.dynamic_resources.constraints import ConstraintState
from plugins.dynamic_resources.counters import CounterLedger
from plugins.dynamic_resources.counters import DeviceID
from plugins.dynamic_resources.counters import PoolID
from plugins.dynamic_resources.device_taints import taint_blocks
from plugins.dynamic_resources.inventory import Device
from plugins.dynamic_resources.names import FIRST_AVAILABLE_MAX_SIZE
from plugins.dynamic_resources.requests import ALL
from plugins.dynamic_resources.requests import Alternative
from plugins.dynamic_resources.requests import ClaimPlan
from plugins.dynamic_resources.requests import requests_of
from plugins.dynamic_resources.selectors import AllocationError

Candidates = Callable[[Alternative], Sequence[Device]]
IsTaken = Callable[[DeviceID], bool]
# The capacity other claims' shares of a device hold, or None if none recorded any.
HeldCapacity = Callable[[DeviceID], Mapping[str, Fraction] | None]
# Checked every this many steps of the search, so the clock is not read per device.
_STEPS_PER_DEADLINE_CHECK = 256


class Refusal(StrEnum):
    """Why one device cannot be given to a request now."""

    IN_USE = "allocated to another claim"
    COUNTERS = "its partition's counters are used up"
    TAINTED = "has a taint the request does not tolerate"
    CAPACITY = "has too little capacity left for the request"


class FilterTimeoutError(Exception):
    """The search ran past the filter timeout."""


@dataclass(slots=True)
class Chosen:
    alternative: Alternative
    devices: list[Device] = field(default_factory=list)
    # Per device: the capacity its share consumes, or None if the device is not shared.
    shares: list[Amounts | None] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Taken:
    """What taking one device changed, so giving it back undoes exactly that."""

    device: Device
    counters: bool
    share: Amounts | None


@dataclass(slots=True)
class _Search:
    plans: Sequence[ClaimPlan]
    candidates: Candidates
    is_taken: IsTaken
    expired: Callable[[], bool]
    counters: CounterLedger
    held: HeldCapacity
    # Devices picked so far that cannot be shared, and by which claims.
    picked: dict[DeviceID, set[int]] = field(default_factory=dict)
    # Capacity this search takes from shared devices, per device.
    taking: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)
    sharing: Counter[DeviceID] = field(default_factory=Counter)
    constraints: list[list[ConstraintState]] = field(default_factory=list)
    chosen: list[list[Chosen]] = field(default_factory=list)
    steps: int = 0

    def tick(self) -> None:
        self.steps += 1
        if self.steps % _STEPS_PER_DEADLINE_CHECK == 0 and self.expired():
            raise FilterTimeoutError

    def usable(self, claim: int, alternative: Alternative, device: Device) -> bool:
        return self.available(claim, alternative, device) and self.meets_constraints(
            claim, alternative, device
        )

    def available(self, claim: int, alternative: Alternative, device: Device) -> bool:
        return self.refusal(claim, alternative, device) is None

    def refusal(self, claim: int, alternative: Alternative, device: Device) -> Refusal | None:
        """Why the device cannot be given to the alternative now, or None if it can."""
        users = self.picked.get(device.id)
        if alternative.admin_access:
            # Admin access shares a device with other claims, but not within its own claim.
            if users and claim in users:
                return Refusal.IN_USE
        elif users or self.is_taken(device.id):
            return Refusal.IN_USE
        # Counters are checked even with admin access, as upstream does; a shared device
        # draws on them once, for its first share.
        if (
            device.consumes
            and not self._shared_already(device)
            and not self.counters.fits(device.pool_id, device.consumes)
        ):
            return Refusal.COUNTERS
        # A taint the request does not tolerate keeps the device from it, as being taken does.
        if taint_blocks(device.raw, alternative.tolerations):
            return Refusal.TAINTED
        return None if self.capacity_fits(alternative, device) else Refusal.CAPACITY

    def _shared_already(self, device: Device) -> bool:
        return device.shareable and (self.held(device.id) is not None or device.id in self.taking)

    def capacity_fits(
        self, alternative: Alternative, device: Device, *, alone: bool = False
    ) -> bool:
        """Whether the request's capacity fits the device; `alone` leaves out what this search
        has taken (upstream's test when it lists all devices, before the search)."""
        if not alternative.capacity and not device.shareable:
            # Unasked, a dedicated device's capacity is taken whole, which always fits: the
            # API allows request policies only on devices that may be shared.
            return True
        taking = {} if alone else self.taking.get(device.id, {})
        return capacity.fits(
            dict(alternative.capacity),
            device.capacities.parsed(),
            self.held(device.id) or {},
            taking,
        )

    def meets_constraints(self, claim: int, alternative: Alternative, device: Device) -> bool:
        return all(c.accepts(alternative, device) for c in self.constraints[claim])

    def take(self, claim: int, alternative: Alternative, device: Device) -> _Taken:
        counters = bool(device.consumes) and not self._shared_already(device)
        if counters:
            self.counters.take(device.pool_id, device.consumes)
        share: Amounts | None = None
        if device.shareable:
            share = capacity.consumed(dict(alternative.capacity), device.capacities.parsed())
            taking = self.taking.setdefault(device.id, {})
            self.sharing[device.id] += 1
            for name, amount in share.items():
                taking[name] = taking.get(name, Fraction(0)) + amount
        else:
            self.picked.setdefault(device.id, set()).add(claim)
        for state in self.constraints[claim]:
            state.add(alternative, device)
        pick = self.chosen[claim][-1]
        pick.devices.append(device)
        pick.shares.append(share)
        return _Taken(device, counters, share)

    def give_back(self, claim: int, taken: _Taken) -> None:
        device = taken.device
        pick = self.chosen[claim][-1]
        pick.devices.pop()
        pick.shares.pop()
        for state in reversed(self.constraints[claim]):
            state.remove(pick.alternative)
        if taken.share is not None:
            taking = self.taking[device.id]
            for name, amount in taken.share.items():
                taking[name] -= amount
            self.sharing[device.id] -= 1
            if not self.sharing[device.id]:
                # The search's last share of it is gone: it no longer shares the device.
                del self.taking[device.id], self.sharing[device.id]
        else:
            users = self.picked[device.id]
            users.discard(claim)
            if not users:
                del self.picked[device.id]
        if taken.counters:
            self.counters.give_back(device.pool_id, device.consumes)


def allocate(
    plans: Sequence[ClaimPlan],
    candidates: Candidates,
    is_taken: IsTaken,
    counters: CounterLedger,
    held: HeldCapacity,
    unusable_pool: tuple[PoolID, str] | None = None,
    expired: Callable[[], bool] = lambda: False,
) -> list[list[Chosen]] | None:
    """The devices chosen for each claim's requests, or None if the node cannot serve all the
    claims. FilterTimeoutError past the deadline; AllocationError if a claim cannot be allocated
    here as written: one of its requests asks for all devices while the node sees a pool that
    is incomplete or invalid (`unusable_pool`), or a constraint rules out one of all devices."""
    if unusable_pool is not None:
        _refuse_all_devices(plans, *unusable_pool)
    search = _Search(plans, candidates, is_taken, expired, counters, held)
    search.constraints = [[ConstraintState(c) for c in p.constraints] for p in plans]
    search.chosen = [[] for _ in plans]
    flat = requests_of(plans)

    def solve(position: int) -> bool:
        if position == len(flat):
            return True
        claim, request = flat[position]
        for alternative in request.alternatives:
            found = candidates(alternative)
            search.chosen[claim].append(Chosen(alternative))
            if alternative.mode == ALL:
                taken = _take_all(search, claim, alternative, found)
                if taken is not None:
                    if solve(position + 1):
                        return True
                    for each in reversed(taken):
                        search.give_back(claim, each)
            elif _pick(search, claim, alternative, found, 0, alternative.count, position):
                return True
            search.chosen[claim].pop()
        return False

    def _pick(
        s: _Search,
        claim: int,
        alternative: Alternative,
        found: Sequence[Device],
        start: int,
        need: int,
        position: int,
    ) -> bool:
        if need == 0:
            return solve(position + 1)
        for index in range(start, len(found) - need + 1):
            s.tick()
            device = found[index]
            if not s.usable(claim, alternative, device):
                continue
            taken = s.take(claim, alternative, device)
            if _pick(s, claim, alternative, found, index + 1, need - 1, position):
                return True
            s.give_back(claim, taken)
        return False

    if not solve(0):
        return None
    return search.chosen


class Probe:
    """Devices tested one at a time against what is allocated now, outside any search."""

    def __init__(self, is_taken: IsTaken, counters: CounterLedger, held: HeldCapacity) -> None:
        self._search = _Search((), lambda _: (), is_taken, lambda: False, counters, held)

    def free_test(self, alternative: Alternative) -> Callable[[Device], bool]:
        """Whether a device could be given to `alternative` on its own: not taken, its counters
        and capacity suffice, no taint in the way. A one-device request fits a node if and
        only if one of its candidates passes."""
        return partial(self._search.available, 0, alternative)

    def refusal_test(self, alternative: Alternative) -> Callable[[Device], Refusal | None]:
        """`free_test`, saying why a device cannot be given (for `explain`)."""
        return partial(self._search.refusal, 0, alternative)


def _refuse_all_devices(plans: Sequence[ClaimPlan], pool: PoolID, reason: str) -> None:
    for plan in plans:
        for request in plan.requests:
            for alternative in request.alternatives:
                if alternative.mode == ALL:
                    raise AllocationError(
                        f"claim {plan.key}, request {alternative.result_name}: asks for all "
                        f"devices, but resource pool {pool[0]}/{pool[1]} is {reason}"
                    )


def _take_all(
    search: _Search, claim: int, alternative: Alternative, found: Sequence[Device]
) -> list[_Taken] | None:
    """allocationMode All: every matching device whose capacity could serve the request, and
    each of them must be free. Returns what was taken (for giving back), or None with nothing
    taken."""
    every = [d for d in found if search.capacity_fits(alternative, d, alone=True)]
    if not every:
        return None
    taken: list[_Taken] = []
    for device in every:
        search.tick()
        if not search.available(claim, alternative, device):
            for each in reversed(taken):
                search.give_back(claim, each)
            return None
        if not search.meets_constraints(claim, alternative, device):
            # A claim whose constraint rules out one of all the devices can never be met.
            raise AllocationError(
                f"claim {search.plans[claim].key}, request {alternative.result_name}: cannot "
                f"add device {device.driver}/{device.pool}/{device.name} because a claim "
                "constraint would not be satisfied"
            )
        taken.append(search.take(claim, alternative, device))
    return taken


def allocation_result(
    plan: ClaimPlan,
    chosen: Sequence[Chosen],
    node_name: str,
    new_share_id: Callable[[], str],
) -> dict[str, Any]:
    """The claim's `status.allocation` for the devices chosen on `node_name`; each share of a
    shared device gets an id of its own and records the capacity it consumes."""
    results: list[dict[str, Any]] = []
    config: list[dict[str, Any]] = []
    for pick in chosen:
        alternative = pick.alternative
        for device, share in zip(pick.devices, pick.shares, strict=True):
            result: dict[str, Any] = {
                "request": alternative.result_name,
                "driver": device.driver,
                "pool": device.pool,
                "device": device.name,
            }
            if alternative.admin_access:
                result["adminAccess"] = True
            if alternative.toleration_specs:
                result["tolerations"] = [dict(t) for t in alternative.toleration_specs]
            for key in ("bindingConditions", "bindingFailureConditions"):
                if device.raw.get(key):
                    result[key] = list(device.raw[key])
            if share is not None:
                result["shareID"] = new_share_id()
                if share:
                    result["consumedCapacity"] = {
                        name: capacity.format_quantity(amount) for name, amount in share.items()
                    }
            results.append(result)
        for entry in alternative.class_config:
            config.append(
                {"source": "FromClass", "requests": [alternative.result_name], **dict(entry)}
            )
    for entry in plan.config:
        config.append({"source": "FromClaim", **dict(entry)})
    devices: dict[str, Any] = {"results": results}
    if config:
        devices["config"] = config
    allocation: dict[str, Any] = {"devices": devices}
    selector = _where_usable([d for pick in chosen for d in pick.devices], node_name)
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def _where_usable(devices: Sequence[Device], node_name: str) -> dict[str, Any] | None:
    """The allocation's node selector: the node itself if one device is local to it or binds
    to it, else every requirement of the devices' selectors in one term, else None (usable
    anywhere)."""
    if any(d.node_name or d.binds_to_node for d in devices):
        return {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        }
    term: dict[str, list[Mapping[str, Any]]] = {"matchFields": [], "matchExpressions": []}
    for device in devices:
        terms: Sequence[Mapping[str, Any]] = (device.node_selector or {}).get(
            "nodeSelectorTerms"
        ) or ()
        if len(terms) != 1:
            continue  # more than one term: validation does not let a slice say so
        for kind, merged in term.items():
            for requirement in terms[0].get(kind) or ():
                if not any(_same_requirement(requirement, r) for r in merged):
                    merged.append(requirement)
    found = {kind: [dict(r) for r in merged] for kind, merged in term.items() if merged}
    return {"nodeSelectorTerms": [found]} if found else None


def _same_requirement(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (
        a.get("key") == b.get("key")
        and a.get("operator") == b.get("operator")
        and set(a.get("values") or ()) == set(b.get("values") or ())
    )


def first_available_score(plans: Sequence[ClaimPlan], chosen: Sequence[Sequence[Chosen]]) -> int:
    """Upstream's Score: each firstAvailable request adds (8 - index of the alternative
    chosen), so nodes where earlier, preferred alternatives fit score higher."""
    return sum(
        FIRST_AVAILABLE_MAX_SIZE - pick.alternative.rank
        for per_claim in chosen
        for pick in per_claim
        if pick.alternative.rank >= 0
    )
