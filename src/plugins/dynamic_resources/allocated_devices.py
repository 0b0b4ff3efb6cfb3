"""Which devices are taken: those in the allocation of every ResourceClaim the informer knows
(so the set is rebuilt from the claims at start and a restart never hands a device out twice),
plus allocations made at Reserve that the API does not show yet.

Devices allocated with admin access are not taken: they stay available to ordinary claims.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugins.dynamic_resources.counters import DeviceID
from scheduler.framework import Lister
from scheduler.objects.raw import RawObject

LOG_LIMIT = 100_000


def allocated_device_ids(allocation: Mapping[str, Any] | None) -> frozenset[DeviceID]:
    if not allocation:
        return frozenset()
    results = (allocation.get("devices") or {}).get("results") or ()
    return frozenset(
        (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
        for r in results
        if not r.get("adminAccess")
    )


def _uid(claim: RawObject) -> str:
    return str((claim.get("metadata") or {}).get("uid") or "")


def _allocation(claim: RawObject) -> Mapping[str, Any] | None:
    found: Mapping[str, Any] | None = (claim.get("status") or {}).get("allocation")
    return found


@dataclass(slots=True)
class _InFlight:
    allocation: Mapping[str, Any]
    devices: frozenset[DeviceID]


class AllocatedDevices:
    """Kept in step with the claims lister by comparing object identities each cycle (the
    informer replaces an object on every change), so only changed claims are re-read."""

    def __init__(self, claims: Callable[[], Lister]) -> None:
        # Looked up on use: informers are started after plugins are built.
        self._claims = claims
        self._seen: dict[int, RawObject] = {}
        self._by_claim: dict[int, frozenset[DeviceID]] = {}
        self._counts: Counter[DeviceID] = Counter()
        self._in_flight: dict[str, _InFlight] = {}
        self._in_flight_devices: Counter[DeviceID] = Counter()
        # The pools (driver, pool) whose devices were taken or freed, in order, so answers
        # about a pool can be kept until something in it changes. Cleared when it grows past
        # LOG_LIMIT; the epoch then tells readers to start over.
        self._log: list[tuple[str, str]] = []
        self._epoch = 0

    def sync(self) -> None:
        current = self._claims().list()
        # Built in C (map, zip): this runs every cycle over every claim.
        ids = dict(zip(map(id, current), current, strict=True))
        if ids.keys() == self._seen.keys():
            return
        for gone in self._seen.keys() - ids.keys():
            self._remove(gone, self._seen[gone])
        for new in ids.keys() - self._seen.keys():
            self._add(new, ids[new])
        self._seen = ids

    def _add(self, key: int, claim: RawObject) -> None:
        devices = allocated_device_ids(_allocation(claim))
        self._by_claim[key] = devices
        self._counts.update(devices)
        self._touch(devices)
        if _allocation(claim) is not None:
            # The API now shows the allocation Reserve made: it counts from the claim itself.
            self.remove_pending(_uid(claim))

    def _remove(self, key: int, claim: RawObject) -> None:
        devices = self._by_claim.pop(key, frozenset())
        self._touch(devices)
        self._counts.subtract(devices)
        for device in devices:
            if self._counts[device] <= 0:
                del self._counts[device]

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

    def has_pending_allocation(self, uid: str) -> bool:
        return uid in self._in_flight

    def pending_allocation(self, uid: str) -> Mapping[str, Any] | None:
        flight = self._in_flight.get(uid)
        return flight.allocation if flight is not None else None

    def signal_pending(self, uid: str, allocation: Mapping[str, Any]) -> None:
        """Reserve: the devices are ours from now on, before the API knows."""
        self.remove_pending(uid)
        flight = _InFlight(allocation, allocated_device_ids(allocation))
        self._in_flight[uid] = flight
        self._in_flight_devices.update(flight.devices)
        self._touch(flight.devices)

    def remove_pending(self, uid: str) -> bool:
        flight = self._in_flight.pop(uid, None)
        if flight is None:
            return False
        self._in_flight_devices.subtract(flight.devices)
        self._touch(flight.devices)
        for device in flight.devices:
            if self._in_flight_devices[device] <= 0:
                del self._in_flight_devices[device]
        return True
