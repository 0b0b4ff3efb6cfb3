"""Allocating a pod's pending claims on one node: every request gets its devices (the first
alternative of a firstAvailable list that works), no device twice, none already taken (unless
the request has admin access), and every matchAttribute constraint holds. A depth-first search
that backs up when a later request cannot be met, bounded by the filter timeout."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from plugins.dynamic_resources.device_taints import taint_blocks
from plugins.dynamic_resources.inventory import Device
from plugins.dynamic_resources.inventory import DeviceID
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
        if device.id in self.picked:
            return False
        if not alternative.admin_access and self.is_taken(device.id):
            return False
        # A taint the request does not tolerate keeps the device from it, as being taken does.
        if taint_blocks(device.raw, alternative.tolerations):
            return False
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
        self.chosen[claim][-1].devices.append(device)
        fixed = []
        for index, constraint in enumerate(self.plans[claim].constraints):
            if constraint.applies_to(alternative) and self.values[claim][index] is None:
                self.values[claim][index] = device.attribute(constraint.attribute)
                fixed.append(index)
        return fixed

    def give_back(self, claim: int, device: Device, fixed: list[int]) -> None:
        self.picked.discard(device.id)
        self.chosen[claim][-1].devices.pop()
        for index in fixed:
            self.values[claim][index] = None


def allocate(
    plans: Sequence[ClaimPlan],
    candidates: Candidates,
    is_taken: IsTaken,
    expired: Callable[[], bool] = lambda: False,
) -> list[list[Chosen]] | None:
    """The devices chosen for each claim's requests, or None if the node cannot serve all the
    claims. FilterTimeoutError past the deadline; AllocationError if a claim cannot be allocated
    anywhere as written."""
    search = _Search(plans, candidates, is_taken, expired)
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


def _take_all(
    search: _Search, claim: int, alternative: Alternative, found: Sequence[Device]
) -> list[tuple[Device, list[int]]] | None:
    """allocationMode All: every matching device, and each of them must be free. Returns what
    was taken (for giving back), or None with nothing taken."""
    if not found:
        return None
    for device in found:
        if not device.pool_complete:
            plan = search.plans[claim]
            raise AllocationError(
                f"claim {plan.key}, request {alternative.result_name}: asks for all devices, "
                f"but resource pool {device.driver}/{device.pool} is currently being updated"
            )
    taken: list[tuple[Device, list[int]]] = []
    for device in found:
        search.tick()
        if not search.usable(claim, alternative, device):
            for back, fixed in reversed(taken):
                search.give_back(claim, back, fixed)
            return None
        taken.append((device, search.take(claim, alternative, device)))
    return taken


def allocation_result(plan: ClaimPlan, chosen: Sequence[Chosen], node_name: str) -> dict[str, Any]:
    """The claim's `status.allocation` for the devices chosen on `node_name`."""
    results: list[dict[str, Any]] = []
    config: list[dict[str, Any]] = []
    node_local = False
    selector: Mapping[str, Any] | None = None
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
            node_local = node_local or bool(device.node_name)
            if device.node_selector is not None and selector is None:
                selector = device.node_selector
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
    if node_local:
        allocation["nodeSelector"] = {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        }
    elif selector is not None:
        allocation["nodeSelector"] = dict(selector)
    return allocation


def first_available_score(plans: Sequence[ClaimPlan], chosen: Sequence[Sequence[Chosen]]) -> int:
    """Upstream's Score: each firstAvailable request adds (8 - index of the alternative
    chosen), so nodes where earlier, preferred alternatives fit score higher."""
    return sum(
        FIRST_AVAILABLE_MAX_SIZE - pick.alternative.rank
        for per_claim in chosen
        for pick in per_claim
        if pick.alternative.rank >= 0
    )
