"""The per-node fit check: which of the pod's requests a node cannot hold, and why.

A node fails for every reason that applies, in upstream's order: pod count, cpu, memory,
ephemeral-storage, then scalar resources by name. A shortfall is unresolvable (preemption
cannot help) when the request exceeds the node's whole allocatable, not just what is free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from plugins.helpers.resources.names import is_extended
from plugins.helpers.resources.names import resource_group
from plugins.node_resources_fit.requests import PodResourceRequest
from scheduler.framework import Code
from scheduler.framework import NodeInfo
from scheduler.framework import Status
from scheduler.objects.resources import PODS

TOO_MANY_PODS = "Too many pods"


def insufficient_reason(resource: str) -> str:
    return f"Insufficient {resource}"


@dataclass(frozen=True, slots=True)
class IgnoredResources:
    """Extended resources the filter does not check (ignoredResources / ignoredResourceGroups)."""

    names: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    def ignores(self, resource: str) -> bool:
        # Only extended resources can be ignored; hugepages and kubernetes.io/ names never are.
        if not is_extended(resource):
            return False
        return resource in self.names or resource_group(resource) in self.groups


NOTHING_IGNORED = IgnoredResources()


@dataclass(frozen=True, slots=True)
class Insufficient:
    resource: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool


def checked_resources(
    request: PodResourceRequest, ignored: IgnoredResources
) -> list[tuple[str, int]]:
    """The (resource, quantity) pairs the filter compares against a node, in reason order."""
    return [(name, value) for name, value in request.checked() if not ignored.ignores(name)]


def insufficient_resources(
    request: PodResourceRequest,
    allocatable: Mapping[str, int],
    used: Mapping[str, int],
    pod_count: int,
    ignored: IgnoredResources = NOTHING_IGNORED,
) -> list[Insufficient]:
    allowed_pods = allocatable.get(PODS, 0)
    found = []
    if pod_count + 1 > allowed_pods:
        found.append(Insufficient(PODS, TOO_MANY_PODS, 1, pod_count, allowed_pods, False))
    if request.is_empty:
        return found
    for name, quantity in checked_resources(request, ignored):
        capacity = allocatable.get(name, 0)
        if request.left_to_devices(name, capacity):
            continue
        in_use = used.get(name, 0)
        if quantity > capacity - in_use:
            found.append(
                Insufficient(
                    name, insufficient_reason(name), quantity, in_use, capacity, quantity > capacity
                )
            )
    return found


def node_insufficient_resources(
    request: PodResourceRequest, info: NodeInfo, ignored: IgnoredResources
) -> list[Insufficient]:
    allocatable = info.node.allocatable if info.node is not None else {}
    return insufficient_resources(request, allocatable, info.requested, len(info.pods), ignored)


def status_of(found: list[Insufficient]) -> Status:
    if not found:
        return Status()
    unresolvable = any(item.unresolvable for item in found)
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
    return Status(code, *(item.reason for item in found))
