"""Partitionable devices (DRAPartitionableDevices, beta and on in v1.36): a pool's counter sets
and the devices that draw on them.

A driver publishes one physical device's budget as a counter set in a slice of its own
(`sharedCounters`, e.g. a GPU's memory and multiprocessors), and every way of cutting it up as
a device that consumes part of that budget (`consumesCounters`, e.g. the whole GPU, or one of
its MIG slices). Such devices overlap: once some are allocated, others no longer fit. A device
may be given only if, with it, no counter of its pool is consumed past what the set holds.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from fractions import Fraction
from typing import Any

from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import parse_quantity

PoolID = tuple[str, str]  # (driver, pool)
DeviceID = tuple[str, str, str]  # (driver, pool, device)
CounterID = tuple[str, str]  # (counter set, counter)
Consumption = tuple[CounterID, Fraction]


class CounterSpecError(ValueError):
    """Counters a pool cannot be allocated from: the pool is invalid until the driver fixes it."""


def _amounts(raw: Any, where: str) -> dict[str, Fraction]:
    if not isinstance(raw or {}, Mapping):
        raise CounterSpecError(f"{where}: counters must be a map")
    found: dict[str, Fraction] = {}
    for name, counter in (raw or {}).items():
        value = counter.get("value") if isinstance(counter, Mapping) else None
        try:
            found[str(name)] = parse_quantity(value if value is not None else 0)
        except QuantityError as exc:
            raise CounterSpecError(f"{where}, counter {name}: {exc}") from exc
    return found


def read_counter_sets(slices: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Fraction]]:
    """The counter sets of one pool's slices; a name given twice makes the pool invalid."""
    sets: dict[str, dict[str, Fraction]] = {}
    for slice_ in slices:
        for counter_set in (slice_.get("spec") or {}).get("sharedCounters") or ():
            if not isinstance(counter_set, Mapping):
                raise CounterSpecError("a counter set must be a map")
            name = str(counter_set.get("name") or "")
            if name in sets:
                raise CounterSpecError(f"duplicate counter set name {name}")
            sets[name] = _amounts(counter_set.get("counters"), f"counter set {name}")
    return sets


def read_consumption(device: Mapping[str, Any]) -> tuple[Consumption, ...]:
    """What a device draws from its pool's counter sets, as (set, counter) and amount."""
    drawn: list[Consumption] = []
    for entry in device.get("consumesCounters") or ():
        if not isinstance(entry, Mapping):
            raise CounterSpecError(
                f"device {device.get('name')}: consumesCounters entries are maps"
            )
        counter_set = str(entry.get("counterSet") or "")
        where = f"device {device.get('name')}, counter set {counter_set}"
        for name, amount in _amounts(entry.get("counters"), where).items():
            drawn.append(((counter_set, name), amount))
    return tuple(drawn)


def check_consumption(
    sets: Mapping[str, Mapping[str, Fraction]], drawn: Iterable[Consumption]
) -> None:
    """A device must draw only on counters its pool declares."""
    for (counter_set, name), _ in drawn:
        declared = sets.get(counter_set)
        if declared is None:
            raise CounterSpecError(f"counter set {counter_set} not found")
        if name not in declared:
            raise CounterSpecError(f"counter {name} not found in counter set {counter_set}")


@dataclass(slots=True)
class PoolCounters:
    """One pool's counters: what its sets hold, and every device of it that draws on them,
    wherever the device is available (an allocated device uses up counters for all nodes)."""

    sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)
    consumers: list[tuple[DeviceID, tuple[Consumption, ...]]] = field(default_factory=list)


@dataclass(slots=True)
class CounterLedger:
    """The counters of the pools one allocation search draws on: what is left after the
    devices allocated already, and what the devices picked so far in this search take."""

    pools: Mapping[PoolID, PoolCounters]
    is_allocated: Callable[[DeviceID], bool]
    _left: dict[PoolID, dict[CounterID, Fraction]] = field(default_factory=dict)
    _drawn: dict[PoolID, dict[CounterID, Fraction]] = field(default_factory=dict)

    def _available(self, pool: PoolID) -> dict[CounterID, Fraction]:
        left = self._left.get(pool)
        if left is None:
            counters = self.pools.get(pool) or PoolCounters()
            left = {
                (set_name, name): amount
                for set_name, amounts in counters.sets.items()
                for name, amount in amounts.items()
            }
            for device_id, drawn in counters.consumers:
                if self.is_allocated(device_id):
                    for key, amount in drawn:
                        if key in left:
                            left[key] -= amount
            self._left[pool] = left
        return left

    def fits(self, pool: PoolID, drawn: Sequence[Consumption]) -> bool:
        """Whether, with `drawn` taken as well, no counter of the pool is overdrawn: one the
        allocated devices overdrew already keeps every further consumer out."""
        left = self._available(pool)
        taken = self._drawn.get(pool, {})
        extra: dict[CounterID, Fraction] = {}
        for key, amount in drawn:
            extra[key] = extra.get(key, Fraction(0)) + amount
        return all(
            available >= taken.get(key, 0) + extra.get(key, 0) for key, available in left.items()
        )

    def take(self, pool: PoolID, drawn: Sequence[Consumption]) -> None:
        taken = self._drawn.setdefault(pool, {})
        for key, amount in drawn:
            taken[key] = taken.get(key, Fraction(0)) + amount

    def give_back(self, pool: PoolID, drawn: Sequence[Consumption]) -> None:
        taken = self._drawn[pool]
        for key, amount in drawn:
            taken[key] -= amount
