"""The devices on a node that one request alternative's selectors match, remembered per
(selectors and tolerations, node) until the ResourceSlices change: replicas of a workload ask
the same question of every node, cycle after cycle.

A matching device whose taint the request does not tolerate stays a candidate: like a device
another claim holds, it cannot be given, which makes an `All` request fail where it is
(`allocator`); `untainted_for_node` leaves such devices out for counting free devices.

A device on which a selector fails (a CEL runtime error such as `no such key`) is kept in its
place among the candidates with its error. Upstream evaluates a selector only on a device its
search reaches and that no claim holds, so the error is the allocator's to raise when it gets
there, not an answer for the whole node."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugins.dynamic_resources.counters import DeviceID
from plugins.dynamic_resources.device_taints import taint_blocks
from plugins.dynamic_resources.inventory import Device
from plugins.dynamic_resources.inventory import Inventory
from plugins.dynamic_resources.inventory import InventoryView
from plugins.dynamic_resources.requests import Alternative
from plugins.dynamic_resources.selectors import AllocationError
from plugins.dynamic_resources.selectors import DeviceMatcher
from scheduler.framework import Node


@dataclass(frozen=True, slots=True)
class Found:
    """One alternative's candidates on one node, in the order a search tries them."""

    # Matching devices and those a selector failed on, in the node's device order.
    devices: tuple[Device, ...]
    # The devices among them that a selector failed on, with the error.
    failures: Mapping[DeviceID, AllocationError]

    @property
    def matching(self) -> tuple[Device, ...]:
        if not self.failures:
            return self.devices
        return tuple(d for d in self.devices if d.id not in self.failures)

    def first_failure(self) -> AllocationError | None:
        return next(iter(self.failures.values()), None)


class CandidateCache:
    def __init__(self, inventory: InventoryView, matcher: DeviceMatcher) -> None:
        self._inventory = inventory
        self._matcher = matcher
        self._version = -1
        self._found: dict[tuple[Any, str], Found] = {}
        # Per alternative: the nodes where a selector failed on one of the candidates.
        self._failing_on: dict[Any, set[str]] = {}

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
            self._failing_on.clear()
            self._matcher.forget_devices()
        return inventory

    def searched(self, inventory: Inventory, alternative: Alternative, node: Node) -> Found:
        """The alternative's candidates on the node, failing ones included."""
        key = (alternative.cache_key, node.name)
        found = self._found.get(key)
        if found is None:
            devices: list[Device] = []
            failures: dict[DeviceID, AllocationError] = {}
            for device in inventory.devices_for(node):
                answer = self._matcher.evaluate(device, alternative.selector_sets)
                if isinstance(answer, AllocationError):
                    failures[device.id] = answer
                elif not answer:
                    continue
                devices.append(device)
            found = Found(tuple(devices), failures)
            self._found[key] = found
            if failures:
                self._failing_on.setdefault(alternative.cache_key, set()).add(node.name)
        return found

    def for_node(
        self, inventory: Inventory, alternative: Alternative, node: Node
    ) -> tuple[Device, ...]:
        """The devices the alternative's selectors match on the node."""
        return self.searched(inventory, alternative, node).matching

    def failing_nodes(self, alternative: Alternative) -> frozenset[str]:
        """The nodes asked about since the slices last changed where a selector failed on one
        of the alternative's candidates."""
        return frozenset(self._failing_on.get(alternative.cache_key, ()))

    def untainted_for_node(
        self, inventory: Inventory, alternative: Alternative, node: Node
    ) -> tuple[Device, ...]:
        """`for_node` without the devices whose taints the alternative does not tolerate."""
        found = self.for_node(inventory, alternative, node)
        if not any(d.raw.get("taints") for d in found):
            return found
        return tuple(d for d in found if not taint_blocks(d.raw, alternative.tolerations))
