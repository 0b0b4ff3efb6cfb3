"""IPPool objects as the plugin reads them: the addresses a pool may give, and the ones its
status says are given. The pool's status is the truth about allocations; everything in memory
is a cache of it plus this process's reservations in flight."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Our API group's IPPool (deploy/crds/ippools.yaml); the lister key of scheduler.cluster.
IP_POOLS = "ippools"
API_GROUP = "kube-pyscheduler.io"
ZONE_LABEL = "topology.kubernetes.io/zone"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class PoolError(ValueError):
    """An IPPool the plugin cannot use; the message names the pool and the field."""


@dataclass(frozen=True, slots=True)
class Allocation:
    """One address given to one pod (by uid; `pod` is namespace/name, for people)."""

    uid: str
    pod: str


# Addresses as integers, [start, end), so a scan for a free one makes no address objects.
Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class IPPool:
    name: str
    network: str
    cidrs: tuple[Network, ...]
    excluded: tuple[Network, ...]
    node_name: str
    zone: str
    allocations: Mapping[str, Allocation]
    resource_version: str
    # Derived from the above at parse time, for the scans Reserve and PreFilter make.
    host_spans: tuple[Span, ...] = ()
    excluded_spans: tuple[Span, ...] = ()
    taken: frozenset[int] = frozenset()
    address_of_uid: Mapping[str, str] | None = None

    def serves(self, node_name: str, node_labels: Mapping[str, str]) -> bool:
        """Whether pods on this node may take addresses from the pool."""
        if self.node_name and self.node_name != node_name:
            return False
        return not self.zone or node_labels.get(ZONE_LABEL) == self.zone

    def addresses(self) -> Iterator[str]:
        """Every address the pool may give, in order: the CIDRs' host addresses (no network or
        broadcast address in IPv4 subnets of 4 or more) less the excluded ranges."""
        return (str(ipaddress.ip_address(n)) for n in self.free_numbers(frozenset()))

    def free_numbers(self, busy: frozenset[int] | set[int]) -> Iterator[int]:
        """The pool's addresses, as integers, in order, that are not in `busy`."""
        for start, end in self.host_spans:
            number = start
            while number < end:
                skip_to = self._excluded_end(number)
                if skip_to is not None:
                    number = skip_to
                    continue
                if number not in busy:
                    yield number
                number += 1

    def _excluded_end(self, number: int) -> int | None:
        for start, end in self.excluded_spans:
            if start <= number < end:
                return end
        return None

    def gives(self, number: int) -> bool:
        """Whether `number` is one of the pool's addresses."""
        in_hosts = any(start <= number < end for start, end in self.host_spans)
        return in_hosts and self._excluded_end(number) is None

    def owned_by(self, uid: str) -> str | None:
        """The address the status gives to pod `uid`, if any."""
        return (self.address_of_uid or {}).get(uid)


def number_of(address: str) -> int | None:
    """An address as an integer; None if it is not an address."""
    try:
        return int(ipaddress.ip_address(address))
    except ValueError:
        return None


def _host_span(cidr: Network) -> Span:
    """Where `cidr.hosts()` starts and ends: IPv4 subnets of 4 addresses or more leave out the
    network and broadcast addresses, IPv6 subnets larger than a /127 the subnet-router
    anycast address."""
    first, size = int(cidr.network_address), cidr.num_addresses
    if cidr.version == 4:
        return (first + 1, first + size - 1) if size >= 4 else (first, first + size)
    return (first + 1, first + size) if size > 2 else (first, first + size)


def _network(value: Any, where: str) -> Network:
    if not isinstance(value, str):
        raise PoolError(f"{where}: must be a CIDR string, got {value!r}")
    try:
        return ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise PoolError(f"{where}: {exc}") from exc


def _string(spec: Mapping[str, Any], key: str, where: str) -> str:
    value = spec.get(key, "")
    if not isinstance(value, str):
        raise PoolError(f"{where}.{key}: must be a string, got {value!r}")
    return value


def parse_pool(raw: Mapping[str, Any]) -> IPPool:
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")
    where = f'IPPool "{name}": spec'
    spec = raw.get("spec") or {}
    network = _string(spec, "network", where)
    if not network:
        raise PoolError(f"{where}.network: required")
    cidrs_raw = spec.get("cidrs") or []
    if not isinstance(cidrs_raw, list) or not cidrs_raw:
        raise PoolError(f"{where}.cidrs: needs at least one CIDR")
    cidrs = tuple(_network(c, f"{where}.cidrs[{i}]") for i, c in enumerate(cidrs_raw))
    # A single excluded address may be written without its /32 or /128.
    excluded_raw = spec.get("exclude") or []
    if not isinstance(excluded_raw, list):
        raise PoolError(f"{where}.exclude: must be a list of CIDRs or addresses")
    excluded = tuple(_network(e, f"{where}.exclude[{i}]") for i, e in enumerate(excluded_raw))
    allocations: dict[str, Allocation] = {}
    for address, entry in ((raw.get("status") or {}).get("allocations") or {}).items():
        if isinstance(entry, Mapping) and entry.get("uid"):
            allocations[str(address)] = Allocation(str(entry["uid"]), str(entry.get("pod", "")))
    numbers = (number_of(address) for address in allocations)
    excluded_spans = tuple(
        (int(e.network_address), int(e.network_address) + e.num_addresses) for e in excluded
    )
    return IPPool(
        name=name,
        network=network,
        cidrs=cidrs,
        excluded=excluded,
        node_name=_string(spec, "nodeName", where),
        zone=_string(spec, "zone", where),
        allocations=allocations,
        resource_version=str(meta.get("resourceVersion") or ""),
        host_spans=tuple(_host_span(cidr) for cidr in cidrs),
        excluded_spans=excluded_spans,
        taken=frozenset(n for n in numbers if n is not None),
        address_of_uid={a.uid: address for address, a in allocations.items()},
    )
