"""The coarse, cluster-wide room check behind a PodGroup's minResources.

As scheduler-plugins' CheckClusterResource does it: no per-node packing, affinity or taints.
The nodes are taken in turn and each one's free room (allocatable less requested, not counting
the group's own pods) is taken off what is still needed of every resource; a resource is met
once what it still needs drops to 0 or below, and stays met. The room is not clamped at 0, so
an overcommitted node adds to what is needed, until the resource is met. What the unmet
resources still need after the last node is the gap.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from plugins.coscheduling.go_quantity import GoQuantity
from plugins.coscheduling.go_quantity import minus_each
from plugins.coscheduling.go_quantity import node_room_form
from plugins.coscheduling.go_quantity import resource_list_text
from scheduler.framework import NodeTable
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import PODS

Rooms = npt.NDArray[np.int64]
# What the group's own pods hold on each node: table row -> resource -> amount.
Holdings = Mapping[int, Mapping[str, int]]

_FIXED = (CPU, MEMORY, EPHEMERAL_STORAGE)


def unmet_resources(table: NodeTable, need: Mapping[str, int], held: Holdings) -> dict[str, Rooms]:
    """The resources no run of nodes from the first one meets, each with every node's room."""
    unmet: dict[str, Rooms] = {}
    for resource, amount in need.items():
        rooms = node_rooms(table, resource, held)
        met = rooms.size > 0 and int(np.cumsum(rooms).max()) >= amount
        if not met:
            unmet[resource] = rooms
    return unmet


def node_rooms(table: NodeTable, resource: str, held: Holdings) -> Rooms:
    """Every node's free room of `resource`, in table order, with what the group's own pods
    hold there given back; negative where the node is overcommitted."""
    size = table.size
    if resource == PODS:
        free = table.allowed_pods[:size] - table.pod_count[:size]
    else:
        free = table.allocatable_of(resource) - table.requested_of(resource)
    offered = _offered(table, resource)
    rooms: Rooms = np.where(offered, free, 0).astype(np.int64)
    for row, amounts in held.items():
        if offered[row]:
            rooms[row] += amounts.get(resource, 0)
    return rooms


def _offered(table: NodeTable, resource: str) -> npt.NDArray[np.bool_]:
    """Rows whose room of `resource` counts. The fixed resources and pods always do; any other
    only on nodes whose allocatable names it, and only a name kube-scheduler's NodeInfo keeps
    (elsewhere the room is 0, as an absent entry of upstream's node resource list reads)."""
    size = table.size
    if resource in _FIXED or resource == PODS:
        return np.ones(size, dtype=np.bool_)
    if not _kept_by_node_info(resource):
        return np.zeros(size, dtype=np.bool_)
    infos = table.node_infos[:size]
    names_it = [info.node is not None and resource in info.node.allocatable for info in infos]
    return np.array(names_it, dtype=np.bool_)


def _kept_by_node_info(resource: str) -> bool:
    """kube-scheduler's scalar resources: extended (domain-prefixed), kubernetes.io/-prefixed
    native, hugepages and attachable volumes."""
    return "/" in resource or resource.startswith(("hugepages-", "attachable-volumes-"))


def gap_text(unmet: Mapping[str, Rooms], wanted: Mapping[str, GoQuantity]) -> str:
    """Upstream's `resource gap: %v`: each unmet resource as Go's Quantity is left after every
    node's room was taken off it."""
    left = {
        resource: minus_each(wanted[resource], rooms.tolist(), node_room_form(resource))
        for resource, rooms in unmet.items()
    }
    return f"resource gap: {resource_list_text(left)}"
