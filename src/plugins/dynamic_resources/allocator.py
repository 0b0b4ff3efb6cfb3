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
from enum import Enum
from enum import StrEnum
from fractions import Fraction
from functools import partial
from typing import Any

from plugins.dynamic_resources import capacity
from plugins.dynamic_resources.candidates import Found
from plugins.dynamic_resources.capacity import Amounts
from plugins.dynamic_resources.claims import PodClaim
from plugins.dynamic_resources.constraints import ConstraintState
from plugins.dynamic_resources.counters import CounterLedger
from plugins.dynamic_resources.counters import DeviceID
from plugins.dynamic_resources.counters import PoolID
from plugins.dynamic_resources.device_taints import taint_blocks
from plugins.dynamic_resources.inventory import Device
from plugins.dynamic_resources.names import FIRST_AVAILABLE_MAX_SIZE
from plugins.dynamic_resources.requests import ALL
from plugins.dynamic_resources.requests import ALLOCATION_RESULTS_MAX_SIZE
from plugins.dynamic_resources.requests import Alternative
from plugins.dynamic_resources.requests import ClaimPlan
from plugins.dynamic_resources.requests import requests_of
from plugins.dynamic_resources.selectors import AllocationError

Candidates = Callable[[Alternative], Found]
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


class _Outcome(Enum):
    """How a branch of the search ended."""

    FOUND = 1
    FAILED = 2
    # Failed because the claim would get more results than an allocation may record, which
    # depends only on the alternatives chosen, not on the devices.
    TOO_MANY = 3


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
    # Per allocationMode All alternative (by identity): the devices it must get.
    every: dict[int, list[Device]] = field(default_factory=dict)
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

    def in_use(self, claim: int, alternative: Alternative, device: Device) -> bool:
        """Held by another claim, or picked in this search: the one test upstream makes before
        it evaluates a device's selectors."""
        users = self.picked.get(device.id)
        if alternative.admin_access:
            # Admin access shares a device with other claims, but not within its own claim.
            return users is not None and claim in users
        return bool(users) or self.is_taken(device.id)

    def refusal(self, claim: int, alternative: Alternative, device: Device) -> Refusal | None:
        """Why the device cannot be given to the alternative now, or None if it can."""
        if self.in_use(claim, alternative, device):
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

    def all_devices(self, alternative: Alternative) -> list[Device]:
        """allocationMode All: every matching device whose capacity could serve the request,
        free or not (upstream's list, made before the search; it depends on nothing the search
        changes). Making it evaluates every device's selectors, so a failing one is an
        AllocationError here."""
        every = self.every.get(id(alternative))
        if every is None:
            found = self.candidates(alternative)
            failure = found.first_failure()
            if failure is not None:
                raise failure
            every = [d for d in found.devices if self.capacity_fits(alternative, d, alone=True)]
            self.every[id(alternative)] = every
        return every

    def results(self, claim: int) -> int:
        return sum(len(pick.devices) for pick in self.chosen[claim])

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
    is incomplete or invalid (`unusable_pool`), it needs more devices than an allocation can
    record, a constraint rules out one of all devices, or a selector fails on a device the
    search reaches (`candidates.Found`)."""
    search = _Search(plans, candidates, is_taken, expired, counters, held)
    _check_sizes(search, unusable_pool)
    search.constraints = [[ConstraintState(c) for c in p.constraints] for p in plans]
    search.chosen = [[] for _ in plans]
    flat = requests_of(plans)

    def solve(position: int) -> _Outcome:
        if position == len(flat):
            return _Outcome.FOUND
        claim, request = flat[position]
        outcome = _try_alternatives(position, claim, request.alternatives)
        if outcome is _Outcome.TOO_MANY and (position == 0 or flat[position - 1][0] != claim):
            # The limit is per claim, so running into it says nothing about earlier claims'
            # devices. (With `_check_sizes` passed it cannot happen here: the claim's smallest
            # alternatives fit. Kept, as upstream keeps it, so it never leaks across claims.)
            return _Outcome.FAILED
        return outcome

    def _try_alternatives(
        position: int, claim: int, alternatives: Sequence[Alternative]
    ) -> _Outcome:
        """The first alternative (of a firstAvailable list) that works. TOO_MANY if every
        one of them ran into the limit of results: then so does any other choice of devices
        for the claim's earlier requests, as long as their alternatives stay the same."""
        all_too_many = True
        for alternative in alternatives:
            every = search.all_devices(alternative) if alternative.mode == ALL else None
            if every is not None and not every:
                all_too_many = False  # an All request needs at least one device
                continue
            need = alternative.count if every is None else len(every)
            if search.results(claim) + need > ALLOCATION_RESULTS_MAX_SIZE:
                # Checked before the alternative's selectors run, as upstream does.
                continue
            search.chosen[claim].append(Chosen(alternative))
            if every is None:
                outcome = _pick(claim, alternative, candidates(alternative), 0, need, position)
            else:
                outcome = _Outcome.FAILED
                taken = _take_all(search, claim, alternative, every)
                if taken is not None:
                    outcome = solve(position + 1)
                    if outcome is not _Outcome.FOUND:
                        for each in reversed(taken):
                            search.give_back(claim, each)
            if outcome is _Outcome.FOUND:
                return outcome
            search.chosen[claim].pop()
            if outcome is not _Outcome.TOO_MANY:
                all_too_many = False
        return _Outcome.TOO_MANY if all_too_many else _Outcome.FAILED

    def _pick(
        claim: int,
        alternative: Alternative,
        found: Found,
        start: int,
        need: int,
        position: int,
    ) -> _Outcome:
        if need == 0:
            return solve(position + 1)
        devices, failures = found.devices, found.failures
        # The last `need - 1` devices cannot complete the request, but upstream's search still
        # reaches them, so they are skipped only when none has a failing selector.
        stop = len(devices) if failures else len(devices) - need + 1
        for index in range(start, stop):
            search.tick()
            device = devices[index]
            failure = failures.get(device.id) if failures else None
            if failure is not None:
                # Upstream evaluates the selectors of every device it reaches that no claim
                # holds: there the error ends the search.
                if search.in_use(claim, alternative, device):
                    continue
                raise failure
            if not search.usable(claim, alternative, device):
                continue
            taken = search.take(claim, alternative, device)
            outcome = _pick(claim, alternative, found, index + 1, need - 1, position)
            if outcome is _Outcome.FOUND:
                return outcome
            search.give_back(claim, taken)
            if outcome is _Outcome.TOO_MANY:
                # Other devices for this request leave the claim's count as it is: no use
                # trying them (upstream's pruning, which keeps the search from trying every
                # combination of a large request's devices in vain).
                return outcome
        return _Outcome.FAILED

    if solve(0) is not _Outcome.FOUND:
        return None
    return search.chosen


class Probe:
    """Devices tested one at a time against what is allocated now, outside any search."""

    def __init__(self, is_taken: IsTaken, counters: CounterLedger, held: HeldCapacity) -> None:
        self._search = _Search((), lambda _: Found((), {}), is_taken, lambda: False, counters, held)

    def free_test(self, alternative: Alternative) -> Callable[[Device], bool]:
        """Whether a device could be given to `alternative` on its own: not taken, its counters
        and capacity suffice, no taint in the way. A one-device request fits a node if and
        only if one of its candidates passes."""
        return partial(self._search.available, 0, alternative)

    def refusal_test(self, alternative: Alternative) -> Callable[[Device], Refusal | None]:
        """`free_test`, saying why a device cannot be given (for `explain`)."""
        return partial(self._search.refusal, 0, alternative)

    def in_use_test(self, alternative: Alternative) -> Callable[[Device], bool]:
        """Whether a claim holds the device, which keeps a search from evaluating its
        selectors."""
        return partial(self._search.in_use, 0, alternative)


def _check_sizes(search: _Search, unusable_pool: tuple[PoolID, str] | None) -> None:
    """Before any search, claim by claim as upstream validates them: a request for all devices
    cannot be served while the node sees an unusable pool, and a claim whose requests need more
    devices at the least (each firstAvailable list counted by its smallest alternative) than an
    allocation can record is an error, not a misfit of this node."""
    for plan in search.plans:
        least = 0
        for request in plan.requests:
            needs: list[int] = []
            for alternative in request.alternatives:
                if alternative.mode != ALL:
                    needs.append(alternative.count)
                    continue
                if unusable_pool is not None:
                    (driver, pool), reason = unusable_pool
                    raise AllocationError(
                        f"claim {plan.key}, request {alternative.result_name}: asks for all "
                        f"devices, but resource pool {driver}/{pool} is {reason}"
                    )
                needs.append(len(search.all_devices(alternative)))
            least += min(needs, default=0)
        if least > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocationError(
                f"claim {plan.key}: number of requested devices {least} exceeds the claim "
                f"limit of {ALLOCATION_RESULTS_MAX_SIZE}"
            )


def _take_all(
    search: _Search, claim: int, alternative: Alternative, every: Sequence[Device]
) -> list[_Taken] | None:
    """allocationMode All: each of `every` (`_Search.all_devices`) must be free. Returns what
    was taken (for giving back), or None with nothing taken."""
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
    config = [*_class_config(chosen), *_claim_config(plan, chosen)]
    devices: dict[str, Any] = {"results": results}
    if config:
        devices["config"] = config
    allocation: dict[str, Any] = {"devices": devices}
    selector = _where_usable([d for pick in chosen for d in pick.devices], node_name)
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def _class_config(chosen: Sequence[Chosen]) -> list[dict[str, Any]]:
    """Each device class's configuration once, in the order the classes first serve a
    request, naming every request (or subrequest) served from that class (as upstream)."""
    by_class: dict[str, list[dict[str, Any]]] = {}
    for pick in chosen:
        alternative = pick.alternative
        entries = by_class.get(alternative.class_name)
        if entries is None:
            by_class[alternative.class_name] = [
                {"source": "FromClass", **dict(entry), "requests": [alternative.result_name]}
                for entry in alternative.class_config
            ]
        else:
            for entry in entries:
                entry["requests"].append(alternative.result_name)
    return [entry for entries in by_class.values() for entry in entries]


def _claim_config(plan: ClaimPlan, chosen: Sequence[Chosen]) -> list[dict[str, Any]]:
    """The claim's configuration as upstream copies it: an entry naming no request once; an
    entry naming requests once per request it names, by the request's own name or by the
    subrequest chosen for it (a subrequest not chosen does not count), so an entry naming two
    requests appears twice."""
    config: list[dict[str, Any]] = []
    for entry in plan.config:
        named = list(entry.get("requests") or ())
        body = {k: v for k, v in entry.items() if k != "requests"}
        if not named:
            config.append({"source": "FromClaim", **body})
            continue
        for pick in chosen:
            alternative = pick.alternative
            if alternative.parent in named or (
                alternative.rank >= 0 and alternative.result_name in named
            ):
                config.append({"source": "FromClaim", "requests": list(named), **body})
    return config


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


def allocated_first_available_score(claims: Sequence[PodClaim]) -> int:
    """`first_available_score` for claims allocated already (upstream's Score counts every
    claim of the pod): a firstAvailable request adds (8 - index) for each of its subrequests
    the allocation's results name; a result naming a subrequest the spec no longer lists
    adds nothing."""
    score = 0
    for claim in claims:
        allocation = claim.allocation
        if allocation is None:
            continue
        named = {
            str(r.get("request"))
            for r in (allocation.get("devices") or {}).get("results") or ()
            if str(r.get("request")).count("/") == 1
        }
        for request in claim.requests:
            if request.get("exactly") is not None:
                continue
            for index, sub in enumerate(request.get("firstAvailable") or ()):
                if f"{request.get('name')}/{sub.get('name')}" in named:
                    score += FIRST_AVAILABLE_MAX_SIZE - index
    return score
