"""The coarse, cluster-wide room check behind a PodGroup's minResources.

As scheduler-plugins does it: free allocatable summed over every node (no per-node packing,
affinity or taints), not counting what the group's own members already hold, against
minResources plus one pod slot per required member.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping

import numpy as np

from scheduler.framework import NodeTable
from scheduler.objects.resources import CPU
from scheduler.objects.resources import PODS


def free_resources(
    table: NodeTable, resources: Iterable[str], give_back: Mapping[str, int]
) -> dict[str, int]:
    """Free amount of each resource over all nodes, plus `give_back` (the group's own share)."""
    size = table.size
    free: dict[str, int] = {}
    for resource in resources:
        if resource == PODS:
            room = table.allowed_pods[:size] - table.pod_count[:size]
        else:
            room = table.allocatable_of(resource) - table.requested_of(resource)
        free[resource] = int(np.maximum(room, 0).sum()) + give_back.get(resource, 0)
    return free


def shortfall(need: Mapping[str, int], free: Mapping[str, int]) -> dict[str, int]:
    """How much of each resource is missing (only the resources that are short)."""
    return {
        name: amount - free.get(name, 0)
        for name, amount in need.items()
        if amount > free.get(name, 0)
    }


def describe(amounts: Mapping[str, int]) -> str:
    """`cpu: 2500m, memory: 1073741824, pods: 2`, in the scheduler's units."""
    parts = [
        f"{name}: {amount}m" if name == CPU else f"{name}: {amount}"
        for name, amount in sorted(amounts.items())
    ]
    return ", ".join(parts)
