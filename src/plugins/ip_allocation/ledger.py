"""This process's addresses in flight: reserved in Reserve, or written in PreBind but not yet
seen back through the pool informer. Counted as taken on top of the pools' status, so a pod is
never offered an address another pod of ours is about to write."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from plugins.ip_allocation.pool import IPPool
from plugins.ip_allocation.pool import number_of


@dataclass(slots=True)
class Held:
    pool: str
    address: str
    uid: str
    # Set once the pool's status carries the allocation (PreBind wrote it).
    persisted: bool = False


class Ledger:
    def __init__(self) -> None:
        self._by_uid: dict[str, Held] = {}

    def held_by(self, uid: str) -> Held | None:
        return self._by_uid.get(uid)

    def hold(self, held: Held) -> None:
        self._by_uid[held.uid] = held

    def drop(self, uid: str) -> Held | None:
        return self._by_uid.pop(uid, None)

    def taken_in(self, pool: str, besides: str = "") -> set[str]:
        """Addresses of `pool` held here, except by pod `besides`."""
        return {h.address for h in self._by_uid.values() if h.pool == pool and h.uid != besides}

    def forget_confirmed(self, pool: IPPool) -> None:
        """Persisted holds the pool's status now shows need no keeping: the status has them."""
        for uid, held in list(self._by_uid.items()):
            if not held.persisted or held.pool != pool.name:
                continue
            allocation = pool.allocations.get(held.address)
            if allocation is not None and allocation.uid == uid:
                del self._by_uid[uid]

    def __len__(self) -> int:
        return len(self._by_uid)


def choose_address(pool: IPPool, taken: set[str], uid: str, preferred: str = "") -> str | None:
    """The address pod `uid` should have from `pool`: the one the status already gives it,
    else `preferred` if still free, else the pool's first free address (None: exhausted)."""
    owned = pool.owned_by(uid)
    if owned is not None:
        return owned
    busy = set(pool.taken)
    busy.update(n for n in map(number_of, taken) if n is not None)
    wanted = number_of(preferred) if preferred else None
    if wanted is not None and wanted not in busy and pool.gives(wanted):
        return preferred
    first = next(pool.free_numbers(busy), None)
    return None if first is None else str(ipaddress.ip_address(first))
