"""ElasticQuota status.used, written by the leader as scheduler-plugins' controller writes it:
the requests of the namespace's scheduled (and assumed) pods, in Kubernetes quantities."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from plugins.capacity_scheduling.quota import ELASTIC_QUOTA_RESOURCE
from plugins.capacity_scheduling.usage import QuotaUsage
from scheduler.framework import Handle
from scheduler.framework.errors import APIError
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.resources import CPU

SYNC_PERIOD_SECONDS = 1.0


def quantities(used: Mapping[str, int]) -> dict[str, str]:
    return {
        name: (f"{amount}m" if name == CPU else str(amount))
        for name, amount in sorted(used.items())
    }


async def sync_once(handle: Handle, usage: QuotaUsage) -> int:
    patched = 0
    for raw in handle.lister(ELASTIC_QUOTA_RESOURCE).list():
        meta = raw.get("metadata") or {}
        namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE)
        if namespace not in usage.quotas:
            continue
        wanted = quantities(usage.used.get(namespace, {}))
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
