"""Allocating a pod's pending claims on one node: every request gets its devices (the first
alternative of a firstAvailable list that works), no device twice, none already taken (unless
the request has admin access), no counter of a partitionable pool overdrawn, and every
matchAttribute constraint holds. A depth-first search that backs up when a later request cannot
be met, bounded by the filter timeout."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

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
# Checked every this many steps of the search, so the clock is not read per device.
_STEPS_PER_DEADLINE_CHECK = 256


class FilterTimeoutError(Exception):
    """The search ran past the filter timeout."""


@dataclass(slots=True)
class Chosen:
    alternative: Alternative
    devices: list[Device] = field(default_factory=list)


@dataclass(slots=True)
class _Search:
    plans: Sequence[ClaimPlan]
    candidates: Candidates
    is_taken: IsTaken
    expired: Callable[[], bool]
    counters: CounterLedger
    picked: set[DeviceID] = field(default_factory=set)
    # Per claim, per constraint: the attribute value its devices must share (None: unset).
    values: list[list[Any]] = field(default_factory=list)
    chosen: list[list[Chosen]] = field(default_factory=list)
    steps: int = 0

    def tick(self) -> None:
        self.steps += 1
        if self.steps % _STEPS_PER_DEADLINE_CHECK == 0 and self.expired():
            raise FilterTimeoutError

    def usable(self, claim: int, alternative: Alternative, device: Device) -> bool:
        return self.available(alternative, device) and self.meets_constraints(
            claim, alternative, device
        )

    def available(self, alternative: Alternative, device: Device) -> bool:
        if device.id in self.picked:
            return False
        if not alternative.admin_access and self.is_taken(device.id):
            return False
        # Counters are checked even with admin access, as upstream does.
        if device.consumes and not self.counters.fits(device.pool_id, device.consumes):
            return False
        # A taint the request does not tolerate keeps the device from it, as being taken does.
        return not taint_blocks(device.raw, alternative.tolerations)

    def meets_constraints(self, claim: int, alternative: Alternative, device: Device) -> bool:
        plan = self.plans[claim]
        for index, constraint in enumerate(plan.constraints):
            if not constraint.applies_to(alternative):
                continue
            value = device.attribute(constraint.attribute)
            if value is None:
                return False
            required = self.values[claim][index]
            if required is not None and required != value:
                return False
        return True

    def take(self, claim: int, alternative: Alternative, device: Device) -> list[int]:
        """Mark `device` used; returns the constraints this fixed, for `give_back`."""
        self.picked.add(device.id)
        if device.consumes:
            self.counters.take(device.pool_id, device.consumes)
        self.chosen[claim][-1].devices.append(device)
        fixed = []
        for index, constraint in enumerate(self.plans[claim].constraints):
            if constraint.applies_to(alternative) and self.values[claim][index] is None:
                self.values[claim][index] = device.attribute(constraint.attribute)
                fixed.append(index)
        return fixed

    def give_back(self, claim: int, device: Device, fixed: list[int]) -> None:
        self.picked.discard(device.id)
        if device.consumes:
            self.counters.give_back(device.pool_id, device.consumes)
        self.chosen[claim][-1].devices.pop()
        for index in fixed:
            self.values[claim][index] = None


def allocate(
    plans: Sequence[ClaimPlan],
    candidates: Candidates,
    is_taken: IsTaken,
    counters: CounterLedger,
    unusable_pool: tuple[PoolID, str] | None = None,
    expired: Callable[[], bool] = lambda: False,
) -> list[list[Chosen]] | None:
    """The devices chosen for each claim's requests, or None if the node cannot serve all the
    claims. FilterTimeoutError past the deadline; AllocationError if a claim cannot be allocated
    here as written: one of its requests asks for all devices while the node sees a pool that
    is incomplete or invalid (`unusable_pool`), or a constraint rules out one of all devices."""
    if unusable_pool is not None:
        _refuse_all_devices(plans, *unusable_pool)
    search = _Search(plans, candidates, is_taken, expired, counters)
    search.values = [[None] * len(p.constraints) for p in plans]
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
                    for device, fixed in reversed(taken):
                        search.give_back(claim, device, fixed)
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
            fixed = s.take(claim, alternative, device)
            if _pick(s, claim, alternative, found, index + 1, need - 1, position):
                return True
            s.give_back(claim, device, fixed)
        return False

    if not solve(0):
        return None
    return search.chosen


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
) -> list[tuple[Device, list[int]]] | None:
    """allocationMode All: every matching device, and each of them must be free. Returns what
    was taken (for giving back), or None with nothing taken."""
    if not found:
        return None
    taken: list[tuple[Device, list[int]]] = []
    for device in found:
        search.tick()
        if not search.available(alternative, device):
            for back, fixed in reversed(taken):
                search.give_back(claim, back, fixed)
            return None
        if not search.meets_constraints(claim, alternative, device):
            # A claim whose constraint rules out one of all the devices can never be met.
            raise AllocationError(
                f"claim {search.plans[claim].key}, request {alternative.result_name}: cannot "
                f"add device {device.driver}/{device.pool}/{device.name} because a claim "
                "constraint would not be satisfied"
            )
        taken.append((device, search.take(claim, alternative, device)))
    return taken


def allocation_result(plan: ClaimPlan, chosen: Sequence[Chosen], node_name: str) -> dict[str, Any]:
    """The claim's `status.allocation` for the devices chosen on `node_name`."""
    results: list[dict[str, Any]] = []
    config: list[dict[str, Any]] = []
    for pick in chosen:
        alternative = pick.alternative
        for device in pick.devices:
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
    """The allocation's node selector: the node itself if one device is local to it, else
    every requirement of the devices' selectors in one term, else None (usable anywhere)."""
    if any(d.node_name for d in devices):
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
