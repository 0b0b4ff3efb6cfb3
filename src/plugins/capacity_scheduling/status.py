"""ElasticQuota status.used, written by the replica that schedules, pods pending or not: the
use the plugin decides by (the requests of the namespace's bound and assumed pods), with a zero
for every other resource its min or max names, in decimal quantities ("2" cpus, "500m", "3G"
bytes).

Unlike scheduler-plugins' controller, which counts Running pods only (so a pod still starting,
or a gang member waiting at Permit, is not in its figure) and keeps a pod's own quantity format
for a resource min and max do not name ("2Gi" where ours writes "2147483648")."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from plugins.capacity_scheduling.quota import ELASTIC_QUOTA_RESOURCE
from plugins.capacity_scheduling.quota import ElasticQuota
from plugins.capacity_scheduling.usage import QuotaUsage
from scheduler.framework import Handle
from scheduler.framework.errors import APIError
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.resources import CPU

SYNC_PERIOD_SECONDS = 1.0
_DECIMAL_SUFFIXES = (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3))


def decimal_quantity(amount: int, *, milli: bool = False) -> str:
    """`amount` (in thousandths with `milli`) as Go writes a decimal quantity: with the largest
    power-of-1000 suffix that keeps the number whole."""
    if milli:
        if amount % 1000:
            return f"{amount}m"
        amount //= 1000
    for suffix, exponent in _DECIMAL_SUFFIXES:
        if amount and amount % 10**exponent == 0:
            return f"{amount // 10**exponent}{suffix}"
    return str(amount)


def used_status(quota: ElasticQuota, used: Mapping[str, int]) -> dict[str, str]:
    named = dict.fromkeys([*quota.min, *quota.max], 0) | dict(used)
    return {
        name: decimal_quantity(amount, milli=name == CPU) for name, amount in sorted(named.items())
    }


async def sync_once(handle: Handle, usage: QuotaUsage) -> int:
    patched = 0
    for raw in handle.lister(ELASTIC_QUOTA_RESOURCE).list():
        meta = raw.get("metadata") or {}
        namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE)
        quota = usage.quotas.get(namespace)
        if quota is None:
            continue
        wanted = used_status(quota, usage.used_by(namespace))
        current: Any = (raw.get("status") or {}).get("used") or {}
        if dict(current) == wanted:
            continue
        try:
            await handle.api.patch_object(
                ELASTIC_QUOTA_RESOURCE,
                namespace,
                str(meta.get("name")),
                {"status": {"used": wanted}},
                subresource="status",
            )
        except APIError:
            continue  # the next pass tries again
        patched += 1
    return patched


async def run_status_loop(handle: Handle, usage: Callable[[], QuotaUsage]) -> None:
    while True:
        await sync_once(handle, usage())
        await handle.clock.sleep(SYNC_PERIOD_SECONDS)
