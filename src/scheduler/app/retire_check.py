"""`kube-pyscheduler retire-check`: may this scheduler be removed yet?

Removing a scheduler while pods still name it leaves them Pending for ever (pending ones now,
running ones once they are replaced). The check lists every pod, in every namespace and any
phase, whose `spec.schedulerName` is the given name, and fails while there is one: completed
pods of old Jobs count too, as the documented removal steps delete them first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import TextIO

from scheduler.cluster.port import ClusterClient
from scheduler.framework.errors import ConfigError

# A schedulerName is a DNS-1123 subdomain, as the API server validates it.
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
EXIT_PODS_REMAIN = 1


def check_scheduler_name(name: str) -> str:
    if len(name) > 253 or not _SUBDOMAIN.fullmatch(name):
        raise ConfigError(f"--scheduler-name: {name!r} is not a valid schedulerName")
    return name


async def pods_naming(client: ClusterClient, scheduler_name: str) -> list[dict[str, Any]]:
    listed = await client.list("pods", field_selector=f"spec.schedulerName={scheduler_name}")
    return sorted(listed.items, key=_where)


def _where(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def report_pods_naming(pods: Sequence[Mapping[str, Any]], scheduler_name: str, out: TextIO) -> int:
    """Prints the pods as a table (or that there are none); returns the exit code."""
    if not pods:
        print(f"No pod names schedulerName {scheduler_name!r}: it can be removed.", file=out)
        return 0
    rows = [("NAMESPACE", "NAME", "PHASE", "NODE")]
    for pod in pods:
        namespace, name = _where(pod)
        phase = str((pod.get("status") or {}).get("phase") or "")
        node = str((pod.get("spec") or {}).get("nodeName") or "<none>")
        rows.append((namespace, name, phase, node))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print("   ".join(cells).rstrip(), file=out)
    print(
        f"{len(pods)} pod(s) still name schedulerName {scheduler_name!r}: do not remove it yet.",
        file=out,
    )
    return EXIT_PODS_REMAIN
