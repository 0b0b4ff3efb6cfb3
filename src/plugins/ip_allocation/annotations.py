"""The pod annotations IPAllocation reads and writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.framework import Pod

# Set by the pod's author: the network whose pools the pod takes its address from.
NETWORK = "ip-allocation.kube-pyscheduler.io/network"
# Written by PreBind, before the Binding: the address, and the IPPool it comes from.
ADDRESS = "ip-allocation.kube-pyscheduler.io/address"
POOL = "ip-allocation.kube-pyscheduler.io/pool"


def requested_network(pod: Pod) -> str:
    """The network the pod asks an address from, "" if it asks none."""
    return pod.annotations.get(NETWORK, "").strip()


def carried_address(raw_pod: Mapping[str, Any]) -> tuple[str, str]:
    """(pool, address) a pod object carries in its annotations; ("", "") if none."""
    annotations = (raw_pod.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(POOL, "")), str(annotations.get(ADDRESS, ""))


def address_patch(pool: str, address: str) -> dict[str, Any]:
    return {"metadata": {"annotations": {POOL: pool, ADDRESS: address}}}
