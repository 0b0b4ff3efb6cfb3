"""Consumable capacity (DRAConsumableCapacity, beta and on in v1.36): requests ask for an
amount of a device's capacity, and a device that allows multiple allocations is shared by as
many claims as its capacity holds.

A request's amount is first fitted to the device's request policy: an unset amount takes the
policy's default (else the whole capacity), and an amount is rounded up to the next valid
value or the next step of the valid range. The result must then keep to the policy (at most
its maximum, on a step, one of the valid values), and, added to what other claims hold and
what this search has taken, stay within the capacity. Every device, shared or not, is checked
this way; only shared devices record what they give out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import parse_quantity

Amounts = dict[str, Fraction]


@dataclass(frozen=True, slots=True)
class Policy:
    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    minimum: Fraction | None = None
    maximum: Fraction | None = None
    step: Fraction | None = None
    has_range: bool = False


@dataclass(frozen=True, slots=True)
class DeviceCapacity:
    value: Fraction
    policy: Policy | None = None


def _quantity(raw: Any) -> Fraction | None:
    if raw is None:
        return None
    try:
        return parse_quantity(raw)
    except QuantityError:
        return None


class Capacities:
    """A device's capacities with their request policies, read on first use: most devices
    have capacities, few requests ask for them, and a cluster holds many devices."""

    __slots__ = ("_parsed", "_raw")

    def __init__(self, device: Mapping[str, Any]) -> None:
        raw = device.get("capacity")
        self._raw: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        self._parsed: dict[str, DeviceCapacity] | None = None

    def __bool__(self) -> bool:
        return bool(self._raw)

    def parsed(self) -> Mapping[str, DeviceCapacity]:
        if self._parsed is None:
            self._parsed = _read(self._raw)
        return self._parsed


def _read(capacities: Mapping[str, Any]) -> dict[str, DeviceCapacity]:
    found: dict[str, DeviceCapacity] = {}
    for name, raw in capacities.items():
        if not isinstance(raw, Mapping):
            continue
        policy_raw = raw.get("requestPolicy")
        policy = None
        if isinstance(policy_raw, Mapping):
            valid_range = policy_raw.get("validRange")
            valid_range = valid_range if isinstance(valid_range, Mapping) else None
            policy = Policy(
                default=_quantity(policy_raw.get("default")),
                valid_values=tuple(
                    v for v in map(_quantity, policy_raw.get("validValues") or ()) if v is not None
                ),
                minimum=_quantity(valid_range.get("min")) if valid_range else None,
                maximum=_quantity(valid_range.get("max")) if valid_range else None,
                step=_quantity(valid_range.get("step")) if valid_range else None,
                has_range=valid_range is not None,
            )
        found[str(name)] = DeviceCapacity(_quantity(raw.get("value")) or Fraction(0), policy)
    return found


def read_requested(body: Mapping[str, Any]) -> Amounts:
    """The amounts a request (or firstAvailable alternative) asks of each capacity."""
    capacity = body.get("capacity")
    requests = capacity.get("requests") if isinstance(capacity, Mapping) else None
    found: Amounts = {}
    if not isinstance(requests, Mapping):
        return found
    for name, raw in requests.items():
        amount = _quantity(raw)
        if amount is not None:
            found[str(name)] = amount
    return found


def _whole(value: Fraction) -> int:
    # Quantity.Value(): rounded up to a whole number, as the step arithmetic upstream uses.
    return math.ceil(value)


def _fitted(requested: Fraction | None, capacity: DeviceCapacity) -> Fraction:
    """What a request takes of one capacity before the policy is checked."""
    policy = capacity.policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.minimum is not None:
        if requested < policy.minimum:
            return policy.minimum
        if policy.step is None:
            return requested
        minimum, step = _whole(policy.minimum), _whole(policy.step)
        steps = -(-(_whole(requested) - minimum) // step)
        return Fraction(minimum + step * steps)
    if policy.valid_values:
        return next((v for v in policy.valid_values if requested <= v), requested)
    return requested


def _violates(amount: Fraction, policy: Policy | None) -> bool:
    if policy is None or (policy.default is not None and amount == policy.default):
        return False
    if policy.has_range:
        if policy.maximum is not None and amount > policy.maximum:
            return True
        if policy.step is not None:
            minimum = _whole(policy.minimum) if policy.minimum is not None else 0
            return (_whole(amount) - minimum) % _whole(policy.step) != 0
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def consumed(requested: Amounts, capacities: Mapping[str, DeviceCapacity]) -> Amounts:
    """What a request takes of every capacity of the device, requested or not."""
    return {name: _fitted(requested.get(name), cap) for name, cap in capacities.items()}


def fits(
    requested: Amounts,
    capacities: Mapping[str, DeviceCapacity],
    held: Mapping[str, Fraction],
    taking: Mapping[str, Fraction],
) -> bool:
    """Whether the request may take from the device: it names only capacities the device has,
    keeps to their policies, and with what is `held` by other claims and what this search is
    `taking` stays within each capacity."""
    if any(name not in capacities for name in requested):
        return False
    for name, capacity in capacities.items():
        amount = _fitted(requested.get(name), capacity)
        if _violates(amount, capacity.policy):
            return False
        if held.get(name, 0) + amount + taking.get(name, 0) > capacity.value:
            return False
    return True


def format_quantity(value: Fraction) -> str:
    """A quantity the API reads back as `value` (it writes its own canonical form)."""
    if value.denominator == 1:
        return str(value.numerator)
    nanos = value * 10**9
    if nanos.denominator == 1:
        milli = value * 1000
        return f"{milli.numerator}m" if milli.denominator == 1 else f"{nanos.numerator}n"
    return f"{math.ceil(nanos)}n"
