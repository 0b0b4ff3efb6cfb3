"""What each quota'd namespace uses: the requests of its pods in the scheduler's cache, which
holds bound and assumed pods alike, so Reserve's and Unreserve's accounting is the cache's
assume and forget. Recounted only when some node's pods changed (the node table's pod clock).

Every pod of the namespace counts, those already running when its quota was created included:
unlike scheduler-plugins, whose plugin starts a new quota at zero use and counts only pods
added after it (those before count once the scheduler restarts)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from plugins.capacity_scheduling.quota import ElasticQuota
from plugins.capacity_scheduling.quota import compared
from plugins.capacity_scheduling.quota import counted
from plugins.capacity_scheduling.quota import sum_of
from scheduler.framework import NodeTable
from scheduler.framework import Pod


@dataclass(slots=True)
class QuotaUsage:
    """Quotas and their usage for one cycle; preemption's dry run adds and removes pods."""

    quotas: dict[str, ElasticQuota] = field(default_factory=dict)  # by namespace
    used: dict[str, dict[str, int]] = field(default_factory=dict)

    def clone(self) -> QuotaUsage:
        return QuotaUsage(dict(self.quotas), {ns: dict(u) for ns, u in self.used.items()})

    def add(self, pod: Pod, sign: int = 1) -> None:
        if pod.namespace not in self.quotas:
            return
        used = self.used.setdefault(pod.namespace, {})
        for name, amount in counted(pod.requests).items():
            used[name] = used.get(name, 0) + sign * amount

    def used_by(self, namespace: str) -> Mapping[str, int]:
        return self.used.get(namespace, {})

    def over_total_min(self, added: Mapping[str, int]) -> bool:
        """Whether the use of all quotas, with `added`, would pass the sum of their mins, in
        any resource that use holds: an extended resource some namespace uses beyond the sum
        shuts out every pod, whatever it asks for, as in scheduler-plugins."""
        total = sum_of([*self.used.values(), added])
        floor = sum_of(q.min for q in self.quotas.values())
        return any(total.get(name, 0) > floor.get(name, 0) for name in compared(total))


class UsageCounter:
    def __init__(self) -> None:
        self._seen: tuple[int, int, tuple[str, ...]] | None = None
        self._used: dict[str, dict[str, int]] = {}

    def usage(self, table: NodeTable, quotas: dict[str, ElasticQuota]) -> QuotaUsage:
        stamp = (id(table), table.pod_clock, tuple(sorted(quotas)))
        if stamp != self._seen:
            self._used = _count(table, quotas)
            self._seen = stamp
        return QuotaUsage(dict(quotas), {ns: dict(u) for ns, u in self._used.items()})


def _count(table: NodeTable, quotas: Mapping[str, ElasticQuota]) -> dict[str, dict[str, int]]:
    usage = QuotaUsage(dict(quotas))
    for info in table.node_infos[: table.size]:
        for pod in info.pods.values():
            usage.add(pod)
    return usage.used
