"""Which allocations in the pools' status no pod uses any more.

An allocation is in use while its pod exists (same uid) and either waits for a node (it will
take that address again when it is placed, see `choose_address`) or runs carrying exactly that
pool and address in its annotations. Everything else is left over from a pod that was deleted,
a binding that failed, or a scheduler that stopped between its writes, and is released.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugins.ip_allocation.annotations import carried_address
from plugins.ip_allocation.pool import IPPool

RawPod = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Leftover:
    pool: str
    address: str
    uid: str
    reason: str


def leftovers(
    pools: Iterable[IPPool], pod_of_uid: Mapping[str, RawPod], in_flight: set[str]
) -> list[Leftover]:
    found = []
    for pool in pools:
        for address, allocation in pool.allocations.items():
            if allocation.uid in in_flight:
                continue
            raw = pod_of_uid.get(allocation.uid)
            if raw is None:
                found.append(Leftover(pool.name, address, allocation.uid, "pod gone"))
                continue
            if not (raw.get("spec") or {}).get("nodeName"):
                continue
            if carried_address(raw) != (pool.name, address):
                found.append(Leftover(pool.name, address, allocation.uid, "pod runs without it"))
    return found
