"""Storage capacity scoring (the StorageCapacityScoring feature gate): how full a node's storage
would be with the pod's volumes, through the configured shape.

Per storage class the pod's volumes use on the node, utilization = requested * 100 // capacity
(100 past it, or when capacity is unknown) gives a score through the shape; the node's score is
the classes' mean, rounded half away from zero. Which volumes count:

- when some claim is bound to a pre-provisioned PV on this node, only those: requested is the
  claims' storage requests, capacity the PVs' (classes as the PVs name them);
- otherwise the claims to provision whose driver publishes storage capacity: requested is their
  requests, capacity that of the CSIStorageCapacity that admitted them (one pool per class, so
  two claims of a class share one capacity rather than add up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plugins.helpers.resources.shape import MAX_UTILIZATION
from plugins.helpers.resources.shape import Point
from plugins.helpers.resources.shape import UtilizationShapePoint
from plugins.helpers.resources.shape import broken_linear
from plugins.helpers.resources.shape import go_round
from plugins.helpers.resources.shape import scaled_shape
from plugins.helpers.resources.shape import utilization
from plugins.helpers.volumes import requested_storage
from plugins.helpers.volumes import storage_bytes
from plugins.helpers.volumes import volume_capacity
from plugins.volume_binding.assume_cache import key_of
from plugins.volume_binding.binder import PodVolumes
from scheduler.objects.raw import spec_of
from scheduler.objects.raw import storage_class_of


@dataclass(slots=True)
class ClassStorage:
    """What the pod's volumes of one storage class ask for on a node, and what there is."""

    requested: int = 0
    capacity: int = 0


def class_storage(volumes: PodVolumes) -> dict[str, ClassStorage]:
    """The pod's storage on one node, by class, as the module docstring says."""
    classes: dict[str, ClassStorage] = {}
    if volumes.static_bindings:
        for binding in volumes.static_bindings:
            class_name = str(spec_of(binding.pv).get("storageClassName") or "")
            storage = classes.setdefault(class_name, ClassStorage())
            storage.requested += requested_storage(binding.pvc) or 0
            storage.capacity += volume_capacity(binding.pv)
        return classes
    for claim in volumes.provisions:
        pool = volumes.capacities.get(key_of(claim))
        if pool is None:
            continue
        storage = classes.setdefault(storage_class_of(claim), ClassStorage())
        storage.capacity = storage_bytes(pool.get("capacity")) or 0
        storage.requested += requested_storage(claim) or 0
    return classes


class StorageScorer:
    """A node's storage capacity score under one shape."""

    def __init__(self, shape: Sequence[UtilizationShapePoint]) -> None:
        self._shape: tuple[Point, ...] = scaled_shape(shape)

    def score(self, volumes: PodVolumes) -> int:
        classes = class_storage(volumes)
        if not classes:
            return 0
        total = sum(self._class_score(storage) for storage in classes.values())
        return go_round(total / len(classes))

    def _class_score(self, storage: ClassStorage) -> int:
        if storage.capacity == 0:
            return broken_linear(self._shape, MAX_UTILIZATION)
        return broken_linear(self._shape, utilization(storage.requested, storage.capacity))
