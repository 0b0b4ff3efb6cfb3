"""Whether claims without a matching PV can be provisioned for a node.

The claim's StorageClass must name a provisioner, its allowedTopologies must admit the node,
and when the provisioner is a CSI driver that publishes storage capacity, some
CSIStorageCapacity of the class reachable from the node must fit the claim's request (the first
that does is kept: storage capacity scoring reads its capacity).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from plugins.helpers.volumes import CSI_DRIVERS
from plugins.helpers.volumes import CSI_STORAGE_CAPACITIES
from plugins.helpers.volumes import STORAGE_CLASSES
from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import namespace_of
from plugins.helpers.volumes import requested_storage
from plugins.helpers.volumes import storage_bytes
from plugins.helpers.volumes import topology_terms_match
from plugins.volume_binding.assume_cache import ObjectKey
from plugins.volume_binding.assume_cache import key_of
from scheduler.framework import Handle
from scheduler.objects.labels import SelectorError
from scheduler.objects.labels import parse_label_selector
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import storage_class_of
from scheduler.objects.volume_annotations import NOT_SUPPORTED_PROVISIONER


class ProvisioningError(Exception):
    """The claim's class is missing: an error of the attempt, not a node's shortcoming."""


@dataclass(frozen=True, slots=True)
class ProvisioningCheck:
    satisfied: bool
    sufficient_storage: bool
    claims: tuple[RawObject, ...] = ()
    # The CSIStorageCapacity that admits each claim whose capacity was checked, by claim key.
    capacities: Mapping[ObjectKey, RawObject] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CapacityCheck:
    enough: bool
    # The CSIStorageCapacity found to fit the claim; None when capacity is not checked.
    capacity: RawObject | None = None


def check_provisioning(
    handle: Handle, claims: Sequence[RawObject], node_labels: Mapping[str, str]
) -> ProvisioningCheck:
    """Raises ProvisioningError for a claim without a class or with an unknown class."""
    capacities: dict[ObjectKey, RawObject] = {}
    for claim in claims:
        class_name = storage_class_of(claim)
        if not class_name:
            raise ProvisioningError(
                f'no class for claim "{namespace_of(claim) or DEFAULT_NAMESPACE}/{name_of(claim)}"'
            )
        storage_class = handle.lister(STORAGE_CLASSES).get("", class_name)
        if storage_class is None:
            raise ProvisioningError(f'failed to find storage class "{class_name}"')
        provisioner = str(storage_class.get("provisioner") or "")
        if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
            return ProvisioningCheck(satisfied=False, sufficient_storage=True)
        if not topology_terms_match(storage_class.get("allowedTopologies") or (), node_labels):
            return ProvisioningCheck(satisfied=False, sufficient_storage=True)
        capacity = check_capacity(handle, provisioner, claim, class_name, node_labels)
        if not capacity.enough:
            return ProvisioningCheck(satisfied=True, sufficient_storage=False)
        if capacity.capacity is not None:
            capacities[key_of(claim)] = capacity.capacity
    return ProvisioningCheck(
        satisfied=True, sufficient_storage=True, claims=tuple(claims), capacities=capacities
    )


def capacity_limit(capacity: RawObject) -> int | None:
    """The largest volume a CSIStorageCapacity admits: maximumVolumeSize, else capacity."""
    value = capacity.get("maximumVolumeSize")
    if value is None:
        value = capacity.get("capacity")
    return storage_bytes(value)


def _reachable(capacity: RawObject, node_labels: Mapping[str, str]) -> bool:
    topology = capacity.get("nodeTopology")
    if topology is None:
        return False
    try:
        selector = parse_label_selector(topology)
    except SelectorError:
        return False
    return selector is not None and selector.matches(node_labels)


def check_capacity(
    handle: Handle,
    provisioner: str,
    claim: RawObject,
    class_name: str,
    node_labels: Mapping[str, str],
) -> CapacityCheck:
    """Whether the node reaches storage of the class with room for the claim's volume, and
    the CSIStorageCapacity that has it."""
    requested = requested_storage(claim)
    if requested is None:
        return CapacityCheck(enough=True)
    driver = handle.lister(CSI_DRIVERS).get("", provisioner)
    # Only CSI drivers that opt in publish capacity; anything else is not checked.
    if driver is None or not (driver.get("spec") or {}).get("storageCapacity"):
        return CapacityCheck(enough=True)
    for capacity in handle.lister(CSI_STORAGE_CAPACITIES).list():
        limit = capacity_limit(capacity)
        if (
            capacity.get("storageClassName") == class_name
            and limit is not None
            and limit >= requested
            and _reachable(capacity, node_labels)
        ):
            return CapacityCheck(enough=True, capacity=capacity)
    return CapacityCheck(enough=False)
