"""IPPool objects and what the tests check of them, shared by the simulator and e2e tests."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from plugins.ip_allocation import ADDRESS
from plugins.ip_allocation import NETWORK
from plugins.ip_allocation import POOL

API_VERSION = "kube-pyscheduler.io/v1alpha1"


def ip_pool(
    name: str,
    *cidrs: str,
    network: str = "pods",
    exclude: Iterable[str] = (),
    node_name: str = "",
    zone: str = "",
    allocations: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"network": network, "cidrs": list(cidrs)}
    if exclude:
        spec["exclude"] = list(exclude)
    if node_name:
        spec["nodeName"] = node_name
    if zone:
        spec["zone"] = zone
    pool: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "IPPool",
        "metadata": {"name": name},
        "spec": spec,
    }
    if allocations:
        pool["status"] = {"allocations": {k: dict(v) for k, v in allocations.items()}}
    return pool


def network_annotation(network: str = "pods") -> dict[str, str]:
    return {NETWORK: network}


def allocations_of(pools: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """(pool, address) -> uid over every pool's status."""
    found = {}
    for pool in pools:
        name = pool["metadata"]["name"]
        for address, entry in ((pool.get("status") or {}).get("allocations") or {}).items():
            if entry:
                found[(name, address)] = entry["uid"]
    return found


def carried(pod: Mapping[str, Any]) -> tuple[str, str] | None:
    """(pool, address) from a pod's annotations, or None."""
    annotations = pod["metadata"].get("annotations") or {}
    if ADDRESS not in annotations:
        return None
    return annotations.get(POOL, ""), annotations[ADDRESS]
