"""What DynamicResources learns about a pod in PreFilter and Filter, kept in the CycleState
for the later extension points of the same attempt."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from plugins.dynamic_resources.allocator import Chosen
from plugins.dynamic_resources.claims import PodClaim
from plugins.dynamic_resources.extended_claim import ExtendedResources
from plugins.dynamic_resources.inventory import Inventory
from plugins.dynamic_resources.requests import ClaimPlan
from scheduler.objects.node_selector import NodeSelector
from scheduler.objects.raw import RawObject

STATE_KEY = "PreFilterDynamicResources"


@dataclass(frozen=True, slots=True)
class ExtendedVariant:
    """The extended resource claim for nodes that leave one set of resources to devices."""

    plan: ClaimPlan
    # containerName, resourceName, requestName: for the pod's extendedResourceClaimStatus.
    mappings: list[dict[str, str]]


@dataclass(slots=True)
class StateData:
    # Every claim of the pod, in spec order.
    claims: list[PodClaim] = field(default_factory=list)
    # The claims the scheduler must allocate (not allocated yet), and their positions.
    plans: list[ClaimPlan] = field(default_factory=list)
    plan_claims: list[int] = field(default_factory=list)
    # Allocated claims usable only on some nodes: claim position -> where.
    available_on: dict[int, NodeSelector] = field(default_factory=dict)
    # Positions of allocated claims that some node could not use (for PostFilter).
    unavailable: set[int] = field(default_factory=set)
    # Allocated claims whose devices failed to bind, or did not within the binding timeout:
    # no node can use them until PostFilter frees them.
    unbindable: set[int] = field(default_factory=set)
    # The devices the slices offered when PreFilter ran (the cycle's view of them).
    inventory: Inventory | None = None
    # Devices chosen per node name, per plan; filled by Filter (or at Reserve for simple pods).
    chosen: dict[str, list[list[Chosen]]] = field(default_factory=dict)
    # Counting free devices decides a node (see ClaimPlan.simple); devices are picked later.
    counted: bool = False
    # Set at Reserve: claim uid -> the allocation to write at PreBind.
    allocations: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Uids of claims PreBind reserved for the pod (Unreserve takes the pod out again).
    written: set[str] = field(default_factory=set)
    # The pod's extended resources a DeviceClass provides; None if it asks for none.
    extended: ExtendedResources | None = None
    # How many of `plans` are the pod's own claims. Any after them is the extended claim's,
    # as nodes that leave every provided resource to devices need it.
    user_plans: int = 0
    # Some node offers a provided resource through a device plugin: nodes differ in the
    # extended claim they need (see `extended_variants`).
    extended_varies: bool = False
    # The extended claim per set of resources a node leaves to devices.
    extended_variants: dict[frozenset[str], ExtendedVariant] = field(default_factory=dict)
    # Set at Reserve: the extended claim for the chosen node; at PreBind: the claim created.
    extended_reserved: ExtendedVariant | None = None
    extended_created: RawObject | None = None

    @property
    def has_work(self) -> bool:
        """The pod has claims, or extended resources a DeviceClass provides."""
        return bool(self.claims) or self.extended is not None

    def clone(self) -> StateData:
        # Shared on purpose, as upstream does: preemption's dry run only reads it.
        return self
