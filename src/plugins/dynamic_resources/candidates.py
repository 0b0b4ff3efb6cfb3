"""The devices on a node that one request alternative's selectors match, remembered per
(selectors and tolerations, node) until the ResourceSlices change: replicas of a workload ask
the same question of every node, cycle after cycle.

A matching device whose taint the request does not tolerate stays a candidate: like a device
another claim holds, it cannot be given, which makes an `All` request fail where it is
(`allocator`); `untainted_for_node` leaves such devices out for counting free devices."""

from __future__ import annotations

from typing import Any

from plugins.dynamic_resources.device_taints import taint_blocks
from plugins.dynamic_resources.inventory import Device
from plugins.dynamic_resources.inventory import Inventory
from plugins.dynamic_resources.inventory import InventoryView
from plugins.dynamic_resources.requests import Alternative
from plugins.dynamic_resources.selectors import DeviceMatcher
from scheduler.framework import Node


class CandidateCache:
    def __init__(self, inventory: InventoryView, matcher: DeviceMatcher) -> None:
        self._inventory = inventory
        self._matcher = matcher
        self._version = -1
        self._found: dict[tuple[Any, str], tuple[Device, ...]] = {}

    @property
    def matcher(self) -> DeviceMatcher:
        return self._matcher

    @property
    def version(self) -> int:
        return self._version

    def refresh(self) -> Inventory:
        """The current inventory; forgets remembered answers when the slices changed."""
        inventory = self._inventory.current()
        if self._inventory.version != self._version:
            self._version = self._inventory.version
            self._found.clear()
            self._matcher.forget_devices()
        return inventory

    def for_node(
        self, inventory: Inventory, alternative: Alternative, node: Node
    ) -> tuple[Device, ...]:
        """AllocationError if a selector fails on one of the node's devices."""
        key = (alternative.cache_key, node.name)
        found = self._found.get(key)
        if found is None:
            found = tuple(
                d
                for d in inventory.devices_for(node)
                if self._matcher.matches(d, alternative.selector_sets)
            )
            self._found[key] = found
        return found

    def untainted_for_node(
        self, inventory: Inventory, alternative: Alternative, node: Node
    ) -> tuple[Device, ...]:
        """`for_node` without the devices whose taints the alternative does not tolerate."""
        found = self.for_node(inventory, alternative, node)
        if not any(d.raw.get("taints") for d in found):
            return found
        return tuple(d for d in found if not taint_blocks(d.raw, alternative.tolerations))
