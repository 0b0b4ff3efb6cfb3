"""The devices ResourceSlices publish, by node: node-local slices, slices for the nodes a
selector picks, all-nodes pools and, in slices with `perDeviceNodeSelection`, each device's own
node, selector or all nodes; pools assembled from their slices of the newest generation.

A pool is given from only when it is whole and valid: all the slices it announces are there, no
device name repeats, and every counter its devices consume is declared (`counters`). Devices of
other pools are not candidates, and a request for all devices fails on a node that sees such a
pool, as upstream's allocator does.

A node's candidates come in upstream's first-fit order (`devices_for`): pool by pool in the
order of their ids, a pool's slices by name, each slice's devices as the slice lists them, a
device of a per-device slice only where it is available. The slices a node sees decide whether
its pool has devices with binding conditions; such pools come after all others, so a device
that needs preparing is chosen only when no other will do. Device taints are honoured when
candidates are chosen (`device_taints`), those DeviceTaintRules give included (`taint_rules`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
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
# The same resolved: a node's name, a parsed selector, True for every node, False for none.
_Target = str | NodeSelector | bool


def _placement(where: RawObject) -> _Placement:
    """Where a slice (or, in a per-device slice, a device) says it is available."""
    return (
        str(where.get("nodeName") or ""),
        where.get("nodeSelector"),
        bool(where.get("allNodes")),
    )


@dataclass(frozen=True, slots=True)
class _Slice:
    """A slice of a usable pool: its devices as it lists them, its place in upstream's order
    (pools by id, then a pool's slices by name), and whether any of its devices has binding
    conditions (which puts its pool last for every node that sees the slice)."""

    rank: int
    pool_id: PoolID
    devices: tuple[Device, ...]
    binding_conditions: bool


class Inventory:
    """A view of every ResourceSlice, rebuilt whenever the slices change."""

    def __init__(self, slices: Sequence[RawObject]) -> None:
        # Usable slices by where they are available: slices for one node, by its name; slices
        # for many nodes, as (selector or None for all nodes, slices), consecutive slices with
        # one selector in one entry so a node is tested once.
        self._local: dict[str, list[_Slice]] = {}
        self._shared: list[tuple[NodeSelector | None, list[_Slice]]] = []
        # Per-device slices, device by device (by index in the slice): devices for one node,
        # by its name; devices for many, as (selector or None, slice, indices).
        self._device_local: dict[str, list[tuple[_Slice, int]]] = {}
        self._device_shared: list[tuple[NodeSelector | None, _Slice, list[int]]] = []
        self._next_rank = 0
        # Pools not given from, and why; the nodes that see each (as devices are seen).
        self.unusable: dict[PoolID, str] = {}
        self._unusable_by_node: dict[str, set[PoolID]] = {}
        self._unusable_shared: list[tuple[NodeSelector | None, PoolID]] = []
        # Partitionable pools: their counter sets and the devices drawing on them.
        self.counters: dict[PoolID, PoolCounters] = {}
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
        # Pools in the order of their ids and slices by name, so ranks follow upstream's order.
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
        per_slice: list[tuple[RawObject, list[tuple[Device, _Placement]]]] = []
        for slice_ in slices:
            found, malformed = self._devices_of(pool_id, slice_)
            per_slice.append((slice_, found))
            problem = problem or (POOL_INVALID if malformed else "")
        devices = [entry for _, found in per_slice for entry in found]
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
        for device, _ in devices:
            if device.consumes:
                counters.consumers.append((device.id, device.consumes))
        for slice_, found in per_slice:
            if found:
                self._place_slice(pool_id, slice_, found)
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
            placement = _placement(raw if per_device else spec)
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

    def _target(self, placement: _Placement, where: str) -> _Target:
        # Checked in upstream's order (NodeMatches): a node's name, all nodes, a selector.
        node_name, selector_raw, all_nodes = placement
        if node_name:
            return node_name
        if all_nodes:
            return True
        if selector_raw is not None:
            selector = self._selector(selector_raw, where)
            return selector if selector is not None else False
        return False  # nothing this version knows: available nowhere

    def _place_slice(
        self, pool_id: PoolID, slice_: RawObject, found: list[tuple[Device, _Placement]]
    ) -> None:
        # Truthiness, not presence: the API server never stores an empty list here.
        late = any(d.raw.get("bindingConditions") for d, _ in found)
        entry = _Slice(self._next_rank, pool_id, tuple(d for d, _ in found), late)
        self._next_rank += 1
        where = f"device {pool_id[0]}/{pool_id[1]}"
        spec = slice_.get("spec") or {}
        if not spec.get("perDeviceNodeSelection"):
            target = self._target(_placement(spec), where)
            if isinstance(target, str):
                self._local.setdefault(target, []).append(entry)
            elif target is not False:
                selector = target if isinstance(target, NodeSelector) else None
                if self._shared and self._shared[-1][0] is selector:
                    self._shared[-1][1].append(entry)
                else:
                    self._shared.append((selector, [entry]))
            return
        for index, (_, placement) in enumerate(found):
            target = self._target(placement, where)
            if isinstance(target, str):
                self._device_local.setdefault(target, []).append((entry, index))
            elif target is not False:
                selector = target if isinstance(target, NodeSelector) else None
                last = self._device_shared[-1] if self._device_shared else None
                if last is not None and last[0] is selector and last[1] is entry:
                    last[2].append(index)
                else:
                    self._device_shared.append((selector, entry, [index]))

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
                placement = _placement(spec)
                placements[json.dumps(placement, sort_keys=True)] = placement
        for placement in placements.values():
            target = self._target(placement, f"pool {pool_id[0]}/{pool_id[1]}")
            if isinstance(target, str):
                self._unusable_by_node.setdefault(target, set()).add(pool_id)
            elif target is not False:
                selector = target if isinstance(target, NodeSelector) else None
                self._unusable_shared.append((selector, pool_id))

    def devices_for(self, node: Node) -> list[Device]:
        """The node's devices in upstream's first-fit order, which lets a driver rank its pools
        and slices by name: the slices the node sees by rank, those of pools where one of them
        has a device with binding conditions last; a per-device slice gives the devices
        available on the node, in the order it lists them."""
        seen: dict[int, _Slice] = {}
        # The devices a per-device slice gives the node, by the slice's rank.
        picked: dict[int, list[int]] = {}
        for entry in self._local.get(node.name, ()):
            seen[entry.rank] = entry
        for selector, entries in self._shared:
            if selector is None or selector.matches(node.labels, node.name):
                for entry in entries:
                    seen[entry.rank] = entry
        for entry, index in self._device_local.get(node.name, ()):
            seen[entry.rank] = entry
            picked.setdefault(entry.rank, []).append(index)
        for selector, entry, indices in self._device_shared:
            if selector is None or selector.matches(node.labels, node.name):
                seen[entry.rank] = entry
                picked.setdefault(entry.rank, []).extend(indices)
        # Upstream decides per pool from the slices the node sees (the devices of a per-device
        # slice that are for other nodes included), so one pool may be last on one node only.
        late = {e.pool_id for e in seen.values() if e.binding_conditions}
        found: list[Device] = []
        for rank in sorted(seen, key=lambda r: (seen[r].pool_id in late, r)):
            entry = seen[rank]
            chosen = picked.get(rank)
            if chosen is None:
                found.extend(entry.devices)
            else:
                found.extend(entry.devices[i] for i in sorted(chosen))
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
