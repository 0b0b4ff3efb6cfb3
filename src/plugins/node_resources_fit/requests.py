"""What a pod asks a node for, in the shape NodeResourcesFit checks it (its PreFilter state)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace

from plugins.helpers.extended_resources import DeviceClassResolver
from plugins.helpers.resources.names import is_scalar
from scheduler.framework import Pod
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY

PRE_FILTER_STATE_KEY = "PreFilterNodeResourcesFit"


@dataclass(frozen=True, slots=True)
class PodResourceRequest:
    """The pod's effective requests (init containers, sidecars and overhead already folded in).

    `scalars` holds the non-zero extended, hugepages and other scalar requests, sorted by name
    so the reasons of a node that lacks several of them always come out in the same order.
    `device_backed` names those a DeviceClass provides: a node with none of such a resource
    allocatable leaves it to DynamicResources, which allocates devices for it.
    """

    cpu: int
    memory: int
    ephemeral_storage: int
    scalars: tuple[tuple[str, int], ...]
    device_backed: frozenset[str] = frozenset()

    @classmethod
    def of(cls, requests: Mapping[str, int]) -> PodResourceRequest:
        scalars = sorted(
            (name, value) for name, value in requests.items() if value and is_scalar(name)
        )
        return cls(
            cpu=requests.get(CPU, 0),
            memory=requests.get(MEMORY, 0),
            ephemeral_storage=requests.get(EPHEMERAL_STORAGE, 0),
            scalars=tuple(scalars),
        )

    @classmethod
    def of_pod(cls, pod: Pod, resolver: DeviceClassResolver | None = None) -> PodResourceRequest:
        request = cls.of(pod.requests)
        if resolver is None or not request.scalars:
            return request
        backed = resolver.class_names(name for name, _ in request.scalars)
        return replace(request, device_backed=frozenset(backed)) if backed else request

    def left_to_devices(self, name: str, allocatable: int) -> bool:
        """Whether a node with `allocatable` of resource `name` leaves it to DynamicResources."""
        return allocatable <= 0 and name in self.device_backed

    @property
    def is_empty(self) -> bool:
        return not (self.cpu or self.memory or self.ephemeral_storage or self.scalars)

    def checked(self) -> list[tuple[str, int]]:
        """(resource, quantity) pairs in upstream's checking order, zero requests left out."""
        core = [(CPU, self.cpu), (MEMORY, self.memory), (EPHEMERAL_STORAGE, self.ephemeral_storage)]
        return [(name, value) for name, value in core if value > 0] + list(self.scalars)
