"""The devices ResourceSlices publish, by node: node-local slices, slices for the nodes a
selector picks, and all-nodes pools; pools assembled from their slices of the newest generation.

Devices using partitionable devices' counters, consumable capacity with multiple allocations or
binding conditions are left out: this scheduler implements none of those features, and a
scheduler without them does not offer such devices (see docs/architecture.md). Device taints
are honoured when candidates are chosen (`device_taints`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from scheduler.framework import Lister
from scheduler.framework import Node
from scheduler.objects.labels import SelectorError
from scheduler.objects.node_selector import NodeSelector
from scheduler.objects.node_selector import parse_node_selector
from scheduler.objects.raw import RawObject

DeviceID = tuple[str, str, str]  # (driver, pool, device)
_ALPHA_DEVICE_FIELDS = ("consumesCounters", "allowMultipleAllocations", "bindingConditions")


@dataclass(frozen=True, slots=True)
class Device:
    driver: str
    pool: str
    name: str
    raw: RawObject = field(repr=False, compare=False)
    # Where the device is available: a node name, a selector's raw form, or neither (all).
    node_name: str = ""
    node_selector: RawObject | None = field(default=None, repr=False, compare=False)
    # Identical for devices a selector cannot tell apart, so an answer is computed once.
    signature: str = field(default="", repr=False, compare=False)
    pool_complete: bool = True

    @property
    def id(self) -> DeviceID:
        return (self.driver, self.pool, self.name)

    def attribute(self, qualified_name: str) -> Any:
        """The value of a fully qualified attribute (`domain/name`), or None if unset."""
        domain, _, short = qualified_name.rpartition("/")
        attributes = self.raw.get("attributes") or {}
        raw = attributes.get(short) if domain == self.driver else None
        if raw is None:
            raw = attributes.get(qualified_name)
        if not raw:
            return None
        return next(iter(raw.items()))


@dataclass(slots=True)
class _Pool:
    generation: int = -1
    expected: int = 0
    slices: list[RawObject] = field(default_factory=list)


def _signature(driver: str, device: RawObject) -> str:
    body = {"a": device.get("attributes") or {}, "c": device.get("capacity") or {}}
    return driver + "\x00" + json.dumps(body, sort_keys=True, separators=(",", ":"))


class Inventory:
    """A view of every ResourceSlice, rebuilt whenever the slices change."""

    def __init__(self, slices: Sequence[RawObject]) -> None:
        self.by_node: dict[str, list[Device]] = {}
        # Devices of slices for many nodes: (selector or None for all nodes, devices).
        self.shared: list[tuple[NodeSelector | None, list[Device]]] = []
        self.problems: list[str] = []
        pools: dict[tuple[str, str], _Pool] = {}
        for slice_ in slices:
            spec = slice_.get("spec") or {}
            pool_spec = spec.get("pool") or {}
            key = (str(spec.get("driver") or ""), str(pool_spec.get("name") or ""))
            pool = pools.setdefault(key, _Pool())
            generation = int(pool_spec.get("generation") or 0)
            if generation > pool.generation:
                pool.generation, pool.slices = generation, []
            if generation == pool.generation:
                pool.slices.append(slice_)
                pool.expected = int(pool_spec.get("resourceSliceCount") or 1)
        for (driver, pool_name), pool in sorted(pools.items()):
            complete = len(pool.slices) >= pool.expected
            for slice_ in pool.slices:
                self._add_slice(driver, pool_name, slice_, complete)

    def _add_slice(self, driver: str, pool: str, slice_: RawObject, complete: bool) -> None:
        spec = slice_.get("spec") or {}
        node_name = str(spec.get("nodeName") or "")
        selector_raw = spec.get("nodeSelector")
        devices = [
            Device(
                driver,
                pool,
                str(d.get("name") or ""),
                d,
                node_name,
                selector_raw,
                _signature(driver, d),
                complete,
            )
            for d in spec.get("devices") or ()
            if not any(d.get(f) for f in _ALPHA_DEVICE_FIELDS)
        ]
        if node_name:
            self.by_node.setdefault(node_name, []).extend(devices)
        elif selector_raw is not None:
            try:
                selector = parse_node_selector(selector_raw)
            except (SelectorError, ValueError, TypeError, KeyError) as exc:
                name = (slice_.get("metadata") or {}).get("name")
                self.problems.append(f"ResourceSlice {name}: invalid nodeSelector: {exc}")
                return
            self.shared.append((selector, devices))
        elif spec.get("allNodes"):
            self.shared.append((None, devices))

    def devices_for(self, node: Node) -> list[Device]:
        found = list(self.by_node.get(node.name, ()))
        for selector, devices in self.shared:
            if selector is None or selector.matches(node.labels, node.name):
                found.extend(devices)
        return found


class InventoryView:
    """The Inventory of a lister's current slices, rebuilt only when a slice changed."""

    def __init__(self, lister: Callable[[], Lister]) -> None:
        # Looked up on use: informers are started after plugins are built.
        self._lister = lister
        self._seen: Sequence[RawObject] = ()
        self._seen_ids: set[int] = set()
        self._inventory = Inventory(())
        self.version = 0

    def current(self) -> Inventory:
        slices = self._lister().list()
        # The informer replaces an object on every change, so identity tells what changed;
        # keeping the objects in `_seen` keeps their ids from being reused.
        ids = set(map(id, slices))
        if ids != self._seen_ids:
            self._seen, self._seen_ids = slices, ids
            self._inventory = Inventory(slices)
            self.version += 1
        return self._inventory
