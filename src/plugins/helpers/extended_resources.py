"""Extended resources that DeviceClasses provide (DRAExtendedResource, beta and on in v1.36).

A pod may ask for devices the old way, as a container resource such as `example.com/gpu: 2`.
When a DeviceClass names that resource in `spec.extendedResourceName`, or the pod asks for
`deviceclass.resource.kubernetes.io/<class>` (every class's implicit name), a node that offers
no such resource through a device plugin gets the devices from DynamicResources instead:
NodeResourcesFit leaves the resource to it there, and it allocates a claim the scheduler makes
for the pod.

Which class provides a name is read from the DeviceClass informer on every call (an index keeps
explicit names), so a class added, changed or removed counts from the next cycle on.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Final

from plugins.helpers.resources.names import is_extended
from plugins.helpers.resources.names import is_scalar
from scheduler.framework import CycleState
from scheduler.framework import Lister
from scheduler.framework import Node
from scheduler.framework import Pod

DEVICE_CLASSES: Final = "deviceclasses"
# Where DynamicResources leaves the pod's DeviceTotals in the cycle state.
DEVICE_TOTALS_KEY: Final = "DeviceTotalsDynamicResources"
# The implicit extended resource name of every DeviceClass is this prefix and its name.
IMPLICIT_PREFIX: Final = "deviceclass.resource.kubernetes.io/"
_EXPLICIT_INDEX: Final = "extendedResourceName"


def may_be_device_backed(name: str) -> bool:
    """Names a DeviceClass may provide: extended resources and implicit class names."""
    return name.startswith(IMPLICIT_PREFIX) or is_extended(name)


def explicit_resource_name(device_class: Mapping[str, Any]) -> str | None:
    """The class's `spec.extendedResourceName`, if it names one."""
    found = (device_class.get("spec") or {}).get("extendedResourceName")
    return str(found) if found else None


def implicit_resource_name(device_class: Mapping[str, Any]) -> str:
    return IMPLICIT_PREFIX + _name(device_class)


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _created(obj: Mapping[str, Any]) -> str:
    # RFC 3339 in UTC, as the server writes it: text order is time order.
    return str((obj.get("metadata") or {}).get("creationTimestamp") or "")


def _preferred(classes: Iterable[Mapping[str, Any]]) -> Mapping[str, Any]:
    """Of several classes naming one resource, the newest, then the lowest name: a class that
    replaces another during a migration takes over as soon as it exists."""
    # max keeps the first of equals, and the names are in ascending order.
    return max(sorted(classes, key=_name), key=_created)


class DeviceClassResolver:
    """Which DeviceClass provides an extended resource name, if any."""

    def __init__(self, classes: Callable[[], Lister]) -> None:
        # Looked up on use: informers start after plugins are built.
        self._classes = classes
        self._indexed: Lister | None = None

    def _lister(self) -> Lister:
        lister = self._classes()
        if lister is not self._indexed:
            lister.add_index(_EXPLICIT_INDEX, explicit_resource_name)
            self._indexed = lister
        return lister

    def class_for(self, resource: str) -> Mapping[str, Any] | None:
        if not may_be_device_backed(resource):
            return None
        lister = self._lister()
        claiming = lister.by_index(_EXPLICIT_INDEX, resource)
        if claiming:
            return _preferred(claiming)
        if resource.startswith(IMPLICIT_PREFIX):
            return lister.get("", resource.removeprefix(IMPLICIT_PREFIX))
        return None

    def provides_any(self, pod: Pod) -> bool:
        """Whether a class provides a resource the pod asks for (a non-zero scalar request).

        Decided without a node, as upstream's pod signature decides it: on a node offering the
        resource through a device plugin it would not be left to devices, but a pod that may be
        left to them somewhere cannot be compared with others, since the devices it would get
        depend on the claim made for it.
        """
        return any(
            self.class_for(name) is not None
            for name, quantity in pod.requests.items()
            if quantity and is_scalar(name)
        )

    def class_names(self, resources: Iterable[str]) -> dict[str, str]:
        """resource -> name of the class providing it, for the resources some class provides."""
        found: dict[str, str] = {}
        for resource in resources:
            device_class = self.class_for(resource)
            if device_class is not None:
                found[resource] = _name(device_class)
        return found


@dataclass(frozen=True, slots=True)
class DeviceTotals:
    """For the resource scorers (NodeResourcesFit, NodeResourcesBalancedAllocation): on a node
    that leaves an extended resource to devices, the node's devices of the class providing it
    count as its allocatable, and those allocated as its use. DynamicResources writes this into
    the cycle state of a pod asking for such a resource."""

    # The resources the pod asks for that a class provides.
    provided: frozenset[str]
    # (devices of the class on the node, how many of them are allocated); None if unknown.
    count: Callable[[str, Node], tuple[int, int] | None]

    def clone(self) -> DeviceTotals:
        return self


def device_totals_for(
    state: CycleState, names: Sequence[str], pod_requests: Sequence[int]
) -> DeviceTotals | None:
    """The pod's DeviceTotals if a scored resource it asks for is provided by a class."""
    found = state.get(DEVICE_TOTALS_KEY, DeviceTotals)
    if found is None:
        return None
    asked = (name for name, request in zip(names, pod_requests, strict=True) if request)
    return found if any(name in found.provided for name in asked) else None
