"""What a claim asks for, read once per cycle: its requests (`exactly`, or a `firstAvailable`
list of alternatives), their DeviceClasses, selectors and capacity requests, its
`matchAttribute` and `distinctAttribute` constraints and its configuration. Missing classes
are found here, before any node is looked at."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from plugins.dynamic_resources import messages
from plugins.dynamic_resources.capacity import read_requested
from plugins.dynamic_resources.claims import ClaimProblemError
from plugins.dynamic_resources.claims import PodClaim
from plugins.dynamic_resources.device_taints import Toleration
from plugins.dynamic_resources.device_taints import read_tolerations
from plugins.dynamic_resources.selectors import AllocationError
from plugins.dynamic_resources.selectors import SelectorSet
from plugins.dynamic_resources.selectors import cel_expressions
from scheduler.framework import Lister
from scheduler.objects.raw import RawObject

ALL = "All"
EXACT_COUNT = "ExactCount"
# The most devices one claim's allocation may record (resourceapi.AllocationResultsMaxSize).
ALLOCATION_RESULTS_MAX_SIZE = 32


@dataclass(frozen=True, slots=True)
class Alternative:
    """One way to satisfy a request: a device class, selectors and how many devices."""

    result_name: str  # "gpu", or "gpu/large" for an alternative of a firstAvailable list
    parent: str
    class_name: str
    selector_sets: tuple[SelectorSet, ...]
    mode: str
    count: int
    admin_access: bool
    class_config: tuple[RawObject, ...]
    # Position in the firstAvailable list; -1 for an `exactly` request.
    rank: int
    # Alternatives with equal keys match the same devices (same selectors and tolerations).
    cache_key: tuple[Any, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    # As written in the claim: the allocation result repeats them for each device.
    toleration_specs: tuple[RawObject, ...] = ()
    # Amounts asked of each device capacity (consumable capacity).
    capacity: tuple[tuple[str, Fraction], ...] = ()


@dataclass(frozen=True, slots=True)
class Constraint:
    requests: frozenset[str]  # empty: every request of the claim
    attribute: str
    # matchAttribute: all devices share the value; distinctAttribute: no two do.
    distinct: bool = False

    def applies_to(self, alternative: Alternative) -> bool:
        return (
            not self.requests
            or alternative.parent in self.requests
            or alternative.result_name in self.requests
        )


@dataclass(frozen=True, slots=True)
class Request:
    name: str
    alternatives: tuple[Alternative, ...]


@dataclass(frozen=True, slots=True)
class ClaimPlan:
    claim: PodClaim
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...]
    config: tuple[RawObject, ...]

    @property
    def key(self) -> str:
        return f"{self.claim.namespace}/{self.claim.name}"

    @property
    def simple(self) -> bool:
        """Plain `exactly` requests for a number of devices, no constraints, no admin access:
        any matching devices that each could be given will do, so counting them decides a
        node (where devices do not draw on shared counters). Not so past the limit of results,
        which the allocator reports as an error."""
        plain = not self.constraints and all(
            len(r.alternatives) == 1
            and r.alternatives[0].rank < 0
            and r.alternatives[0].mode == EXACT_COUNT
            and not r.alternatives[0].admin_access
            for r in self.requests
        )
        return plain and (
            sum(r.alternatives[0].count for r in self.requests) <= ALLOCATION_RESULTS_MAX_SIZE
        )


def _alternative(
    claim: PodClaim,
    body: RawObject,
    result_name: str,
    parent: str,
    rank: int,
    classes: Lister,
) -> Alternative:
    class_name = str(body.get("deviceClassName") or "")
    if not class_name:
        raise AllocationError(messages.unsupported_request(result_name))
    device_class = classes.get("", class_name)
    if device_class is None:
        raise ClaimProblemError(messages.class_missing(result_name, class_name))
    class_spec = device_class.get("spec") or {}
    mode = str(body.get("allocationMode") or EXACT_COUNT)
    if mode not in (EXACT_COUNT, ALL):
        raise AllocationError(
            f"claim {claim.namespace}/{claim.name}, request {result_name}: "
            f"unsupported count mode {mode}"
        )
    selector_sets = (
        SelectorSet(f"class {class_name}", cel_expressions(class_spec.get("selectors"))),
        SelectorSet(
            f"claim {claim.namespace}/{claim.name}", cel_expressions(body.get("selectors"))
        ),
    )
    tolerations = read_tolerations(body.get("tolerations"))
    return Alternative(
        result_name=result_name,
        parent=parent,
        class_name=class_name,
        selector_sets=selector_sets,
        cache_key=(*(s.expressions for s in selector_sets), tolerations),
        tolerations=tolerations,
        toleration_specs=tuple(body.get("tolerations") or ()),
        mode=mode,
        count=int(body.get("count") or 1) if mode == EXACT_COUNT else 0,
        admin_access=bool(body.get("adminAccess")),
        class_config=tuple(class_spec.get("config") or ()),
        rank=rank,
        capacity=tuple(sorted(read_requested(body).items())),
    )


def plan_claim(claim: PodClaim, classes: Lister) -> ClaimPlan:
    """Raises ClaimProblemError (pod unschedulable) or AllocationError (claim broken)."""
    requests: list[Request] = []
    for body in claim.requests:
        name = str(body.get("name") or "")
        exactly = body.get("exactly")
        first = body.get("firstAvailable")
        if exactly is not None:
            alternatives: tuple[Alternative, ...] = (
                _alternative(claim, exactly, name, name, -1, classes),
            )
        elif first:
            alternatives = tuple(
                _alternative(claim, sub, f"{name}/{sub.get('name')}", name, rank, classes)
                for rank, sub in enumerate(first)
            )
        else:
            raise ClaimProblemError(
                messages.unknown_request_type(claim.namespace, claim.name, name)
            )
        requests.append(Request(name, alternatives))
    devices = (claim.claim.get("spec") or {}).get("devices") or {}
    constraints = tuple(
        _constraint(claim, index, c) for index, c in enumerate(devices.get("constraints") or ())
    )
    return ClaimPlan(claim, tuple(requests), constraints, tuple(devices.get("config") or ()))


def _constraint(claim: PodClaim, index: int, raw: RawObject) -> Constraint:
    requests = frozenset(raw.get("requests") or ())
    if raw.get("matchAttribute"):
        return Constraint(requests, str(raw["matchAttribute"]))
    if raw.get("distinctAttribute"):
        return Constraint(requests, str(raw["distinctAttribute"]), distinct=True)
    raise AllocationError(
        f"claim {claim.namespace}/{claim.name}, constraint #{index}: empty constraint "
        "(unsupported constraint type?)"
    )


def requests_of(plans: Sequence[ClaimPlan]) -> list[tuple[int, Request]]:
    return [(i, r) for i, plan in enumerate(plans) for r in plan.requests]
