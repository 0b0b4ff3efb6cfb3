"""Which devices are taken: those in the allocation of every ResourceClaim the informer knows
(so the set is rebuilt from the claims at start and a restart never hands a device out twice),
plus allocations made at Reserve that the informer does not show yet. One of those that PreBind
stored stays until the informer shows the claim as it was written or later, as upstream's assume
cache keeps a written claim: then the claim itself says what it holds, even if it was freed or
deleted before anything looked.

Devices allocated with admin access are not taken: they stay available to ordinary claims. A
result with a `shareID` is one share of a device that allows multiple allocations: the device
is not taken, but is in use (its counters are drawn on) and holds the capacity the share
consumed, summed over its shares.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from plugins.dynamic_resources.capacity import Amounts
from plugins.dynamic_resources.counters import DeviceID
from scheduler.framework import Lister
from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import parse_quantity
from scheduler.objects.raw import RawObject

LOG_LIMIT = 100_000


def allocated_device_ids(allocation: Mapping[str, Any] | None) -> frozenset[DeviceID]:
    if not allocation:
        return frozenset()
    return frozenset(
        _device_id(r) for r in _results(allocation) if not r.get("adminAccess") and not _shared(r)
    )


def _results(allocation: Mapping[str, Any] | None) -> Sequence[Mapping[str, Any]]:
    found: Sequence[Mapping[str, Any]] = (
        ((allocation or {}).get("devices") or {}).get("results")
    ) or ()
    return found


def _device_id(result: Mapping[str, Any]) -> DeviceID:
    return (str(result.get("driver")), str(result.get("pool")), str(result.get("device")))


def _shared(result: Mapping[str, Any]) -> bool:
    return result.get("shareID") is not None


@dataclass(frozen=True, slots=True)
class _Shares:
    """The shares of devices one allocation holds, and the capacity each consumed."""

    devices: tuple[DeviceID, ...] = ()
    capacity: tuple[tuple[DeviceID, Amounts], ...] = ()

    @staticmethod
    def of(allocation: Mapping[str, Any] | None) -> _Shares:
        devices: list[DeviceID] = []
        capacity: list[tuple[DeviceID, Amounts]] = []
        for result in _results(allocation):
            if result.get("adminAccess") or not _shared(result):
                continue
            devices.append(_device_id(result))
            consumed = result.get("consumedCapacity")
            if consumed:
                amounts = {str(k): _amount(v) for k, v in consumed.items()}
                capacity.append((_device_id(result), amounts))
        return _Shares(tuple(devices), tuple(capacity))


def _amount(raw: Any) -> Fraction:
    try:
        return parse_quantity(raw)
    except QuantityError:
        return Fraction(0)


ClaimKey = tuple[str, str]


def _key(claim: RawObject) -> ClaimKey:
    meta = claim.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _uid(claim: RawObject) -> str:
    return str((claim.get("metadata") or {}).get("uid") or "")


def _allocation(claim: RawObject) -> Mapping[str, Any] | None:
    found: Mapping[str, Any] | None = (claim.get("status") or {}).get("allocation")
    return found


def _newer(claim: RawObject, version: str) -> bool:
    """Whether the claim is a later version than `version` (compared as numbers, as the API
    server's resourceVersions are; any other version is taken as a different one)."""
    current = str((claim.get("metadata") or {}).get("resourceVersion") or "")
    try:
        return int(current) > int(version)
    except ValueError:
        return current != version


@dataclass(slots=True)
class _InFlight:
    allocation: Mapping[str, Any]
    devices: frozenset[DeviceID]
    shares: _Shares
    # Once PreBind stored the allocation: the claim and the resourceVersion its write was
    # based on. Whatever the informer shows of a later version counts instead from then on,
    # allocated or not: it may have been freed, or deleted, before the next look.
    written: tuple[ClaimKey, str] | None = None


class AllocatedDevices:
    """Kept in step with the claims lister each cycle: only the claims changed since the last
    cycle are read again (the lister's change log names them; when it cannot, every claim is
    compared by identity, as the informer replaces an object on every change)."""

    def __init__(self, claims: Callable[[], Lister]) -> None:
        # Looked up on use: informers are started after plugins are built.
        self._claims = claims
        self._read_at: tuple[Lister | None, int] = (None, -1)
        self._seen: dict[ClaimKey, RawObject] = {}
        self._by_claim: dict[ClaimKey, frozenset[DeviceID]] = {}
        self._counts: Counter[DeviceID] = Counter()
        self._shares_by_claim: dict[ClaimKey, _Shares] = {}
        # Shares of devices (API and in flight alike), and the capacity they hold per device.
        self._shares: Counter[DeviceID] = Counter()
        self._held: dict[DeviceID, dict[str, Fraction]] = {}
        self._in_flight: dict[str, _InFlight] = {}
        self._written: dict[ClaimKey, str] = {}  # claim -> uid of its stored allocation in flight
        self._in_flight_devices: Counter[DeviceID] = Counter()
        # The pools (driver, pool) whose devices were taken or freed, in order, so answers
        # about a pool can be kept until something in it changes. Cleared when it grows past
        # LOG_LIMIT; the epoch then tells readers to start over.
        self._log: list[tuple[str, str]] = []
        self._epoch = 0

    def sync(self) -> None:
        lister = self._claims()
        last_lister, last_revision = self._read_at
        revision = lister.revision
        if lister is last_lister and revision == last_revision:
            return
        changed = lister.changed_since(last_revision) if lister is last_lister else None
        self._read_at = (lister, revision)
        if changed is None:
            current: dict[ClaimKey, RawObject | None] = {_key(c): c for c in lister.list()}
            keys = current.keys() | self._seen.keys()
        else:
            current = {key: lister.get(*key) for key in set(changed)}
            keys = set(current)
        for key in keys:
            now = current.get(key)
            before = self._seen.get(key)
            if now is before:
                continue
            if before is not None:
                self._remove(key, before)
                del self._seen[key]
            if now is not None:
                self._add(key, now)
                self._seen[key] = now
            # A key from the change log that is gone now was deleted, even if never seen here.
            self._settle(key, now, gone=changed is not None or before is not None)

    def _add(self, key: ClaimKey, claim: RawObject) -> None:
        devices = allocated_device_ids(_allocation(claim))
        self._by_claim[key] = devices
        self._counts.update(devices)
        self._touch(devices)
        shares = _Shares.of(_allocation(claim))
        if shares.devices:
            self._shares_by_claim[key] = shares
            self._hold(shares, 1)
        if _allocation(claim) is not None:
            # The API now shows the allocation Reserve made: it counts from the claim itself.
            self.remove_pending(_uid(claim))

    def _remove(self, key: ClaimKey, claim: RawObject) -> None:
        shares = self._shares_by_claim.pop(key, None)
        if shares is not None:
            self._hold(shares, -1)
        devices = self._by_claim.pop(key, frozenset())
        self._touch(devices)
        self._counts.subtract(devices)
        for device in devices:
            if self._counts[device] <= 0:
                del self._counts[device]

    def _hold(self, shares: _Shares, sign: int) -> None:
        """Add (sign 1) or drop (sign -1) one allocation's shares and the capacity they hold."""
        self._touch(frozenset(shares.devices))
        for device in shares.devices:
            self._shares[device] += sign
            if self._shares[device] <= 0:
                del self._shares[device]
        for device, amounts in shares.capacity:
            held = self._held.setdefault(device, {})
            for name, amount in amounts.items():
                held[name] = held.get(name, Fraction(0)) + sign * amount
            if sign < 0 and device not in self._shares:
                self._held.pop(device, None)

    def _touch(self, devices: frozenset[DeviceID]) -> None:
        if len(self._log) > LOG_LIMIT:
            self._log.clear()
            self._epoch += 1
        self._log.extend((driver, pool) for driver, pool, _ in devices)

    @property
    def position(self) -> tuple[int, int]:
        """Where the change log is now: (epoch, length)."""
        return (self._epoch, len(self._log))

    def pools_changed_since(self, position: tuple[int, int]) -> set[tuple[str, str]] | None:
        """Pools touched since `position`, or None if the log was cleared meanwhile."""
        epoch, length = position
        if epoch != self._epoch:
            return None
        return set(self._log[length:])

    def is_taken(self, device: DeviceID) -> bool:
        return device in self._counts or device in self._in_flight_devices

    def is_allocated(self, device: DeviceID) -> bool:
        """Taken, or shared by at least one claim: either way its counters are drawn on."""
        return self.is_taken(device) or device in self._shares

    def held_capacity(self, device: DeviceID) -> Mapping[str, Fraction] | None:
        """The capacity the shares of a device hold, or None if no share recorded any."""
        return self._held.get(device)

    def has_pending_allocation(self, uid: str) -> bool:
        return uid in self._in_flight

    def pending_allocation(self, uid: str) -> Mapping[str, Any] | None:
        flight = self._in_flight.get(uid)
        return flight.allocation if flight is not None else None

    def signal_pending(self, uid: str, allocation: Mapping[str, Any]) -> None:
        """Reserve: the devices are ours from now on, before the API knows."""
        self.remove_pending(uid)
        flight = _InFlight(allocation, allocated_device_ids(allocation), _Shares.of(allocation))
        self._in_flight[uid] = flight
        self._in_flight_devices.update(flight.devices)
        self._touch(flight.devices)
        self._hold(flight.shares, 1)

    def mark_written(self, uid: str, key: ClaimKey, version: str) -> None:
        """PreBind stored the allocation in flight under `uid` in the claim `key`, by a write
        based on `version`: it stays taken until the informer shows a later version of the
        claim, whose own allocation (or none) counts from then on."""
        flight = self._in_flight.get(uid)
        if flight is None:
            return
        flight.written = (key, version)
        self._written[key] = uid
        seen = self._seen.get(key)
        if seen is not None:
            self._settle(key, seen, gone=False)

    def _settle(self, key: ClaimKey, now: RawObject | None, *, gone: bool) -> None:
        """Drop the stored allocation in flight for `key` once the informer is past it: a later
        version of the claim, another claim under its name, or (`gone`) none at all."""
        uid = self._written.get(key)
        if uid is None:
            return
        flight = self._in_flight.get(uid)
        if flight is None or flight.written is None:
            del self._written[key]
            return
        if now is None:
            if not gone:
                return
        elif _uid(now) == uid and not _newer(now, flight.written[1]):
            return
        self.remove_pending(uid)

    def is_written(self, uid: str) -> bool:
        flight = self._in_flight.get(uid)
        return flight is not None and flight.written is not None

    def rename_pending(self, uid: str, new_uid: str) -> None:
        """The claim allocated under `uid` was created as `new_uid` (the claim of a pod's
        extended resources): its allocation stays in flight until the API shows it there."""
        flight = self._in_flight.pop(uid, None)
        if flight is not None:
            self._in_flight[new_uid] = flight

    def remove_pending(self, uid: str) -> bool:
        flight = self._in_flight.pop(uid, None)
        if flight is None:
            return False
        if flight.written is not None and self._written.get(flight.written[0]) == uid:
            del self._written[flight.written[0]]
        self._in_flight_devices.subtract(flight.devices)
        self._touch(flight.devices)
        self._hold(flight.shares, -1)
        for device in flight.devices:
            if self._in_flight_devices[device] <= 0:
                del self._in_flight_devices[device]
        return True
