"""The devices ResourceSlices publish, by node: node-local slices, slices for the nodes a
selector picks, all-nodes pools and, in slices with `perDeviceNodeSelection`, each device's own
node, selector or all nodes; pools assembled from their slices of the newest generation.

A pool is given from only when it is whole and valid: all the slices it announces are there, no
device name repeats, and every counter its devices consume is declared (`counters`). Devices of
other pools are not candidates, and a request for all devices fails on a node that sees such a
pool, as upstream's allocator does.

Pools with devices that have binding conditions come after all others, as upstream orders
them, so a device that needs preparing is chosen only when no other will do. Device taints are
honoured when candidates are chosen (`device_taints`), those DeviceTaintRules give included
(`taint_rules`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from plugins.dynamic_resources.capacity import Capacities
from plugins.dynamic_resources.counters import Consumption
from plugins.dynamic_resources.counters import CounterSpecError
from plugins.dynamic_resources.counters import DeviceID
from plugins.dynamic_resources.counters import PoolCounters
from plugins.dynamic_resources.counters import PoolID
from plugins.dynamic_resources.counters import check_consumption
from plugins.dynamic_resources.counters import read_consumption
from plugins.dynamic_resources.counters import read_counter_sets
from plugins.dynamic_resources.messages import POOL_BEING_UPDATED
from plugins.dynamic_resources.messages import POOL_INVALID
from plugins.dynamic_resources.taint_rules import with_rule_taints
from scheduler.framework import Lister
from scheduler.framework import Node
from scheduler.objects.labels import SelectorError
from scheduler.objects.node_selector import NodeSelector
from scheduler.objects.node_selector import parse_node_selector
from scheduler.objects.raw import RawObject


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
    # What the device draws from its pool's counter sets (partitionable devices).
    consumes: tuple[Consumption, ...] = field(default=(), repr=False, compare=False)
    # Its capacities and their request policies, and whether claims may share it.
    capacities: Capacities = field(
        default_factory=lambda: Capacities({}), repr=False, compare=False
    )
    shareable: bool = False
    # Whether the device is bound to the node it is allocated on (and the allocation too).
    binds_to_node: bool = False
    # Whether its pool has devices with binding conditions: such pools are tried last.
    late_pool: bool = False

    @property
    def id(self) -> DeviceID:
        return (self.driver, self.pool, self.name)

    @property
    def pool_id(self) -> PoolID:
        return (self.driver, self.pool)

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
    body = {
        "a": device.get("attributes") or {},
        "c": device.get("capacity") or {},
        "m": bool(device.get("allowMultipleAllocations")),
    }
    return driver + "\x00" + json.dumps(body, sort_keys=True, separators=(",", ":"))


def _slice_name(slice_: RawObject) -> str:
    return str((slice_.get("metadata") or {}).get("name") or "")


def _duplicate_device(slices: Sequence[RawObject]) -> str:
    seen: set[str] = set()
    for slice_ in slices:
        for device in (slice_.get("spec") or {}).get("devices") or ():
            name = str(device.get("name") or "")
            if name in seen:
                return f"duplicate device name {name}"
            seen.add(name)
    return ""


# Where a slice, or a device of a per-device slice, is available.
_Placement = tuple[str, RawObject | None, bool]  # (node name, selector, all nodes)


class Inventory:
    """A view of every ResourceSlice, rebuilt whenever the slices change."""

    def __init__(self, slices: Sequence[RawObject]) -> None:
        self.by_node: dict[str, list[Device]] = {}
        # Devices of slices for many nodes: (selector or None for all nodes, devices).
        self.shared: list[tuple[NodeSelector | None, list[Device]]] = []
        # Pools not given from, and why; the nodes that see each (as devices are seen).
        self.unusable: dict[PoolID, str] = {}
        self._unusable_by_node: dict[str, set[PoolID]] = {}
        self._unusable_shared: list[tuple[NodeSelector | None, PoolID]] = []
        # Partitionable pools: their counter sets and the devices drawing on them.
        self.counters: dict[PoolID, PoolCounters] = {}
        self.has_late_pools = False
        self.problems: list[str] = []
        # Parsed once per distinct selector: a pool's devices often share one.
        self._selectors: dict[str, NodeSelector | None] = {}
        pools: dict[PoolID, _Pool] = {}
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
        for pool_id, pool in sorted(pools.items()):
            self._add_pool(pool_id, pool)

    def _add_pool(self, pool_id: PoolID, pool: _Pool) -> None:
        slices = sorted(pool.slices, key=_slice_name)
        problem = POOL_BEING_UPDATED if len(slices) != pool.expected else ""
        counters = PoolCounters()
        if not problem:
            try:
                counters.sets = read_counter_sets(slices)
                problem = POOL_INVALID if _duplicate_device(slices) else ""
            except CounterSpecError:
                problem = POOL_INVALID
        devices: list[tuple[Device, _Placement]] = []
        for slice_ in slices:
            found, malformed = self._devices_of(pool_id, slice_)
            devices.extend(found)
            problem = problem or (POOL_INVALID if malformed else "")
        if not problem:
            try:
                for device, _ in devices:
                    check_consumption(counters.sets, device.consumes)
            except CounterSpecError:
                problem = POOL_INVALID
        if problem:
            self.unusable[pool_id] = problem
            self._place_unusable(pool_id, slices, devices)
            return
        late = any(d.raw.get("bindingConditions") is not None for d, _ in devices)
        for device, placement in devices:
            if device.consumes:
                counters.consumers.append((device.id, device.consumes))
            self._place(replace(device, late_pool=True) if late else device, placement)
        self.has_late_pools = self.has_late_pools or late
        if counters.sets:
            self.counters[pool_id] = counters

    def _devices_of(
        self, pool_id: PoolID, slice_: RawObject
    ) -> tuple[list[tuple[Device, _Placement]], bool]:
        """The slice's devices and where each is available; True if a device's counters
        cannot be read (the pool is then invalid)."""
        spec = slice_.get("spec") or {}
        malformed = False
        per_device = bool(spec.get("perDeviceNodeSelection"))
        found: list[tuple[Device, _Placement]] = []
        driver, pool = pool_id
        for raw in spec.get("devices") or ():
            where = raw if per_device else spec
            placement = (
                str(where.get("nodeName") or ""),
                where.get("nodeSelector"),
                bool(where.get("allNodes")),
            )
            consumes: tuple[Consumption, ...] = ()
            try:
                consumes = read_consumption(raw)
            except CounterSpecError:
                malformed = True
            device = Device(
                driver,
                pool,
                str(raw.get("name") or ""),
                raw,
                placement[0],
                placement[1],
                _signature(driver, raw),
                consumes,
                Capacities(raw),
                bool(raw.get("allowMultipleAllocations")),
                bool(raw.get("bindsToNode")),
            )
            found.append((device, placement))
        return found, malformed

    def _selector(self, raw: RawObject, where: str) -> NodeSelector | None:
        """The parsed selector, or None (with the problem noted) if it is malformed."""
        key = json.dumps(raw, sort_keys=True)
        if key not in self._selectors:
            try:
                self._selectors[key] = parse_node_selector(raw)
            except (SelectorError, ValueError, TypeError, KeyError) as exc:
                self.problems.append(f"{where}: invalid nodeSelector: {exc}")
                self._selectors[key] = None
        return self._selectors[key]

    def _place(self, device: Device, placement: _Placement) -> None:
        node_name, selector_raw, all_nodes = placement
        if node_name:
            self.by_node.setdefault(node_name, []).append(device)
        elif selector_raw is not None:
            selector = self._selector(selector_raw, f"device {device.driver}/{device.pool}")
            if selector is not None:
                self._shared_entry(selector).append(device)
        elif all_nodes:
            self._shared_entry(None).append(device)

    def _shared_entry(self, selector: NodeSelector | None) -> list[Device]:
        # Consecutive devices with one selector share an entry, so a node is tested once.
        if self.shared and self.shared[-1][0] is selector:
            return self.shared[-1][1]
        devices: list[Device] = []
        self.shared.append((selector, devices))
        return devices

    def _place_unusable(
        self, pool_id: PoolID, slices: Sequence[RawObject], devices: list[tuple[Device, _Placement]]
    ) -> None:
        """Remember which nodes see the pool: those its slices or devices are for, and every
        node when it declares counters (upstream counts such a pool for all nodes)."""
        if any((s.get("spec") or {}).get("sharedCounters") for s in slices):
            self._unusable_shared.append((None, pool_id))
            return
        placements = {json.dumps(p, sort_keys=True): p for _, p in devices}
        for slice_ in slices:
            spec = slice_.get("spec") or {}
            if not spec.get("perDeviceNodeSelection"):
                placement = (
                    str(spec.get("nodeName") or ""),
                    spec.get("nodeSelector"),
                    bool(spec.get("allNodes")),
                )
                placements[json.dumps(placement, sort_keys=True)] = placement
        for node_name, selector_raw, all_nodes in placements.values():
            if node_name:
                self._unusable_by_node.setdefault(node_name, set()).add(pool_id)
            elif selector_raw is not None:
                selector = self._selector(selector_raw, f"pool {pool_id[0]}/{pool_id[1]}")
                if selector is not None:
                    self._unusable_shared.append((selector, pool_id))
            elif all_nodes:
                self._unusable_shared.append((None, pool_id))

    def devices_for(self, node: Node) -> list[Device]:
        """The node's devices, pool by pool in the order of their ids (upstream's first-fit
        order, which lets a driver rank its pools by name), pools with binding conditions
        last."""
        found = list(self.by_node.get(node.name, ()))
        for selector, devices in self.shared:
            if selector is None or selector.matches(node.labels, node.name):
                found.extend(devices)
        if self.shared or self.has_late_pools:
            found.sort(key=lambda d: (d.late_pool, d.driver, d.pool))
        return found

    def unusable_pools_for(self, node: Node) -> list[tuple[PoolID, str]]:
        """The pools the node sees that cannot be given from, and why, in the order of ids."""
        pools = set(self._unusable_by_node.get(node.name, ()))
        for selector, pool_id in self._unusable_shared:
            if selector is None or selector.matches(node.labels, node.name):
                pools.add(pool_id)
        return [(pool_id, self.unusable[pool_id]) for pool_id in sorted(pools)]


class InventoryView:
    """The Inventory of a lister's current slices, with the taints of the DeviceTaintRules in
    force (`taint_rules`), rebuilt only when a slice or a rule changed."""

    def __init__(self, slices: Callable[[], Lister], rules: Callable[[], Lister]) -> None:
        # Looked up on use: informers are started after plugins are built.
        self._slices = slices
        self._rules = rules
        self._seen: tuple[Sequence[RawObject], Sequence[RawObject]] = ((), ())
        self._seen_ids: tuple[set[int], set[int]] = (set(), set())
        self._inventory = Inventory(())
        self.version = 0
        # The listers and their revisions when they were last read.
        self._read_at: tuple[Lister | None, int, Lister | None, int] = (None, -1, None, -1)

    def current(self) -> Inventory:
        slices_lister, rules_lister = self._slices(), self._rules()
        read_at = (slices_lister, slices_lister.revision, rules_lister, rules_lister.revision)
        if read_at == self._read_at:
            return self._inventory  # nothing changed
        self._read_at = read_at
        slices, rules = slices_lister.list(), rules_lister.list()
        # The informer replaces an object on every change, so identity tells what changed;
        # keeping the objects in `_seen` keeps their ids from being reused.
        ids = (set(map(id, slices)), set(map(id, rules)))
        if ids != self._seen_ids:
            self._seen, self._seen_ids = (slices, rules), ids
            self._inventory = Inventory(with_rule_taints(slices, rules) if rules else slices)
            self.version += 1
        return self._inventory
