"""How many devices of a class a node has, and how many of them are allocated: what
NodeResourcesFit and NodeResourcesBalancedAllocation score an extended resource a DeviceClass
provides by, on a node that leaves the resource to devices. As upstream counts them: every
device of the class the node sees, allocated when a claim holds it or a share of it."""

from __future__ import annotations

from collections.abc import Callable

from plugins.dynamic_resources.allocated_devices import AllocatedDevices
from plugins.dynamic_resources.candidates import CandidateCache
from plugins.dynamic_resources.inventory import Inventory
from plugins.dynamic_resources.requests import EXACT_COUNT
from plugins.dynamic_resources.requests import Alternative
from plugins.dynamic_resources.selectors import SelectorSet
from plugins.dynamic_resources.selectors import cel_expressions
from plugins.helpers.extended_resources import DeviceClassResolver
from scheduler.framework import Node
from scheduler.objects.raw import RawObject

Count = Callable[[str, Node], tuple[int, int] | None]


def class_alternative(device_class: RawObject) -> Alternative:
    """A request for any device of the class: its selectors alone. Its cache key is that of a
    claim's plain request for the class, so both share what the candidate cache found."""
    name = str((device_class.get("metadata") or {}).get("name") or "")
    expressions = cel_expressions((device_class.get("spec") or {}).get("selectors"))
    selector_sets = (SelectorSet(f"class {name}", expressions), SelectorSet("", ()))
    return Alternative(
        result_name="",
        parent="",
        class_name=name,
        selector_sets=selector_sets,
        mode=EXACT_COUNT,
        count=1,
        admin_access=False,
        class_config=(),
        rank=-1,
        cache_key=(expressions, (), ()),
    )


def device_count(
    resolver: DeviceClassResolver,
    candidates: CandidateCache,
    inventory: Inventory,
    allocated: AllocatedDevices,
) -> Count:
    def count(resource: str, node: Node) -> tuple[int, int] | None:
        device_class = resolver.class_for(resource)
        if device_class is None:
            return None
        searched = candidates.searched(inventory, class_alternative(device_class), node)
        if searched.failures:
            return None  # a class selector failing on a device: upstream counts nothing then
        found = searched.devices
        return len(found), sum(1 for device in found if allocated.is_allocated(device.id))

    return count
