"""The columnar node table: one row per node, numpy columns that plugins vectorize over.

The cache keeps it current incrementally: `upsert_node` on node events, `refresh_usage` when
pods come and go. Plugins read it during a cycle and never write it.

Labels are stored per key as a column of value ids (-1 = label absent) plus the key's value
vocabulary, so a selector requirement is evaluated over the vocabulary once and gathered to all
rows in one operation, even for keys such as kubernetes.io/hostname whose values are unique.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.framework.node_info import NodeInfo
from scheduler.objects.labels import LabelSelector
from scheduler.objects.labels import Requirement
from scheduler.objects.node import ContainerImage
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY
from scheduler.objects.taints import Taint

Int64Array = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]

_MEMO_LIMIT = 4096
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# How many recent stamps `rows_stamped_since` can look back over (at least half as many).
_STAMP_LOG_LIMIT = 4096


def _saturated(value: int) -> int:
    """A node's summed requests, held to the int64 column. Each pod's requests fit in an
    int64, but enough of them on one node need not; a node holding that much is full either
    way (upstream's int64 sums wrap around instead)."""
    return min(max(value, _INT64_MIN), _INT64_MAX)


class LabelColumn:
    """Value ids of one label key for every row, and the vocabulary behind them."""

    __slots__ = ("ids", "value_ids", "values")

    def __init__(self, capacity: int) -> None:
        self.ids: Int32Array = np.full(capacity, -1, dtype=np.int32)
        self.value_ids: dict[str, int] = {}
        self.values: list[str] = []

    def intern(self, value: str) -> int:
        found = self.value_ids.get(value)
        if found is None:
            found = len(self.values)
            self.value_ids[value] = found
            self.values.append(value)
        return found


class NodeTable:
    """Columns over all nodes known to the cache. Rows are dense: 0 .. size-1."""

    def __init__(self, capacity: int = 64) -> None:
        self._capacity = capacity
        self.names: list[str] = []
        self.node_infos: list[NodeInfo] = []
        self._row_of: dict[str, int] = {}
        self.resource_names: list[str] = [CPU, MEMORY, EPHEMERAL_STORAGE]
        self._resource_index: dict[str, int] = {n: i for i, n in enumerate(self.resource_names)}
        width = len(self.resource_names)
        self.allocatable: Int64Array = np.zeros((capacity, width), dtype=np.int64)
        self.requested: Int64Array = np.zeros((capacity, width), dtype=np.int64)
        self.non_zero_requested: Int64Array = np.zeros((capacity, 2), dtype=np.int64)
        self.pod_count: Int64Array = np.zeros(capacity, dtype=np.int64)
        self.allowed_pods: Int64Array = np.zeros(capacity, dtype=np.int64)
        self.port_count: Int64Array = np.zeros(capacity, dtype=np.int64)
        self.affinity_pod_count: Int64Array = np.zeros(capacity, dtype=np.int64)
        self.anti_affinity_pod_count: Int64Array = np.zeros(capacity, dtype=np.int64)
        # Totals of the two columns above over all rows, so "does any pod carry (anti-)affinity"
        # is answered without a pass over the rows.
        self.affinity_pods = 0
        self.anti_affinity_pods = 0
        self.unschedulable: BoolArray = np.zeros(capacity, dtype=np.bool_)
        self.taint_set_id: Int32Array = np.zeros(capacity, dtype=np.int32)
        # Stamped from `pod_clock` whenever a row's pods change (or the row is rewritten or
        # moved), so a plugin keeping per-row tallies of pods refreshes only rows stamped after
        # the clock value it last saw.
        self.pod_stamp: Int64Array = np.zeros(capacity, dtype=np.int64)
        self.pod_clock = 0
        # The rows stamped at clock values _stamped_base + 1 .. pod_clock, in order, so that a
        # reader a few stamps behind learns which rows changed without a pass over them all.
        # Only the recent part is kept (see `rows_stamped_since`).
        self._stamped: list[int] = []
        self._stamped_base = 0
        # Taint sets are interned: id 0 is "no taints"; ids are never reused.
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_set_ids: dict[tuple[Taint, ...], int] = {(): 0}
        self._label_columns: dict[str, LabelColumn] = {}
        # Cluster-wide image state, kept as kube-scheduler's cache keeps it: image name ->
        # names of the nodes that have it (ImageLocality's spread factor), and one size per
        # name, the size reported by the node that added the name while no other node held it.
        self.image_nodes: dict[str, set[str]] = {}
        self.image_sizes: dict[str, int] = {}
        # Bumped whenever the image state is written, so answers memoized from it stay valid.
        self.image_version = 0
        # Bumped whenever labels of any row change, so memoized selector masks stay valid.
        self.label_version = 0
        self._selector_memo: dict[Hashable, tuple[int, BoolArray]] = {}
        self._taint_memo: dict[Hashable, BoolArray] = {}
        self._all_rows: Int64Array | None = None

    # ---- reading -------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def row_of(self, name: str) -> int | None:
        return self._row_of.get(name)

    def all_rows(self) -> Int64Array:
        """Rows 0 .. size-1, in order. The same read-only array is returned until the table
        changes size, so `covers(rows)` can recognise it in constant time."""
        cached = self._all_rows
        if cached is None or len(cached) != self.size:
            cached = np.arange(self.size, dtype=np.int64)
            cached.flags.writeable = False
            self._all_rows = cached
        return cached

    def covers(self, rows: Int64Array) -> bool:
        """Whether `rows` is the array `all_rows()` returned (every row, in order)."""
        return rows is self._all_rows and len(rows) == self.size

    def gather(self, values: npt.NDArray[Any], rows: Int64Array) -> npt.NDArray[Any]:
        """`values[rows]` for a per-row column; a view without copying when rows cover all."""
        if self.covers(rows):
            return values[: self.size]
        return values[rows]

    def rows_stamped_since(self, clock: int) -> list[int] | None:
        """The rows stamped after `clock` (a past `pod_clock`), ascending and each once, the
        same rows as `pod_stamp > clock` finds; None when that is too far back to say."""
        start = clock - self._stamped_base
        if start < 0:
            return None
        size = self.size
        return sorted({row for row in self._stamped[start:] if row < size})

    def resource_column(self, resource: str) -> int | None:
        return self._resource_index.get(resource)

    def allocatable_of(self, resource: str) -> Int64Array:
        """Allocatable of `resource` for every row (zeros where the node has none)."""
        column = self._resource_index.get(resource)
        if column is None:
            return np.zeros(self.size, dtype=np.int64)
        return self.allocatable[: self.size, column]

    def requested_of(self, resource: str) -> Int64Array:
        column = self._resource_index.get(resource)
        if column is None:
            return np.zeros(self.size, dtype=np.int64)
        return self.requested[: self.size, column]

    def label_ids(self, key: str) -> tuple[Int32Array, list[str]]:
        """Per-row value ids of label `key` (-1 where absent) and the values they index."""
        column = self._label_columns.get(key)
        if column is None:
            column = self._build_label_column(key)
        return column.ids[: self.size], column.values

    def match_requirement(self, requirement: Requirement) -> BoolArray:
        """Rows whose labels satisfy one selector requirement."""
        ids, values = self.label_ids(requirement.key)
        operator = requirement.operator
        if operator == "Exists":
            return ids >= 0
        if operator == "DoesNotExist":
            return ids < 0
        # The last slot of `per_value` stands for "label absent" and is indexed by id -1.
        per_value = np.zeros(len(values) + 1, dtype=np.bool_)
        if operator in ("In", "NotIn"):
            column = self._label_columns[requirement.key]
            for value in requirement.values:
                value_id = column.value_ids.get(value)
                if value_id is not None:
                    per_value[value_id] = True
            if operator == "NotIn":
                per_value = ~per_value  # absent labels satisfy NotIn
        else:
            per_value[:-1] = [requirement.matches({requirement.key: v}) for v in values]
        return per_value[ids]

    def match_selector(self, selector: LabelSelector) -> BoolArray:
        """Rows whose labels match every requirement of `selector` (memoized per label version)."""
        memo_key = selector.cache_key()
        cached = self._selector_memo.get(memo_key)
        if cached is not None and cached[0] == self.label_version and len(cached[1]) == self.size:
            return cached[1]
        result = np.ones(self.size, dtype=np.bool_)
        for requirement in selector.requirements:
            result &= self.match_requirement(requirement)
        # Shared between callers through the memo: nobody may change it in place.
        result.flags.writeable = False
        if len(self._selector_memo) >= _MEMO_LIMIT:
            self._selector_memo.clear()
        self._selector_memo[memo_key] = (self.label_version, result)
        return result

    def per_taint_set(
        self, key: Hashable, predicate: Callable[[tuple[Taint, ...]], Any]
    ) -> npt.NDArray[Any]:
        """Evaluate `predicate` once per distinct taint set; memoized under `key`.

        Returns an array indexed by taint-set id; gather with `result[table.taint_set_id[rows]]`.
        Taint-set ids are append-only, so a memo only ever needs extending.
        """
        cached = self._taint_memo.get(key)
        count = len(self.taint_sets)
        if cached is not None and len(cached) == count:
            return cached
        start = 0 if cached is None else len(cached)
        fresh = [predicate(s) for s in self.taint_sets[start:count]]
        result = (
            np.asarray(fresh) if cached is None else np.concatenate([cached, np.asarray(fresh)])
        )
        if len(self._taint_memo) >= _MEMO_LIMIT:
            self._taint_memo.clear()
        self._taint_memo[key] = result
        return result

    # ---- writing (the cache only) ----------------------------------------------------------

    def upsert_node(self, info: NodeInfo) -> int:
        """Add the node's row or rewrite it entirely (labels, taints, allocatable, usage)."""
        node = info.node
        if node is None:
            raise ValueError("cannot put a NodeInfo without a node into the table")
        # Checked before anything is written, so a bad node never leaves half a row behind.
        # Node.from_dict already refuses such quantities; this guards nodes built in code.
        for resource, value in node.allocatable.items():
            if not _INT64_MIN <= value <= _INT64_MAX:
                raise ValueError(
                    f"node {node.name}: allocatable {resource} {value} is not an int64"
                )
        row = self._row_of.get(node.name)
        if row is None:
            row = self.size
            self._ensure_capacity(row + 1)
            self.names.append(node.name)
            self.node_infos.append(info)
            self._row_of[node.name] = row
        else:
            self.node_infos[row] = info
        for resource in node.allocatable:
            self._ensure_resource(resource)
        self.allocatable[row, :] = 0
        for resource, value in node.allocatable.items():
            self.allocatable[row, self._resource_index[resource]] = value
        self.allowed_pods[row] = node.allocatable.get("pods", 0)
        self.unschedulable[row] = node.unschedulable
        self.taint_set_id[row] = self._intern_taints(node.taints)
        for key, column in self._label_columns.items():
            label = node.labels.get(key)
            column.ids[row] = -1 if label is None else column.intern(label)
        self.label_version += 1
        self.refresh_usage(info)
        return row

    def refresh_usage(self, info: NodeInfo) -> None:
        """Rewrite the usage columns of the node's row from its NodeInfo."""
        row = self._row_of.get(info.name)
        if row is None:
            return
        for resource in info.requested:
            self._ensure_resource(resource)
        requested = self.requested[row]
        requested[:] = 0
        for resource, value in info.requested.items():
            requested[self._resource_index[resource]] = _saturated(value)
        self.non_zero_requested[row, 0] = _saturated(info.non_zero_cpu)
        self.non_zero_requested[row, 1] = _saturated(info.non_zero_memory)
        self.pod_count[row] = len(info.pods)
        self.port_count[row] = len(info.used_ports)
        self._set_affinity_counts(
            row, info.pods_with_affinity, info.pods_with_required_anti_affinity
        )
        self._stamp_pods(row)

    def remove_node(self, name: str) -> None:
        """Drop a row, moving the last row into its place to keep rows dense."""
        row = self._row_of.pop(name, None)
        if row is None:
            return
        last = self.size - 1
        # The row's pods leave the totals; the last row's are moved, then its slot is cleared.
        self._set_affinity_counts(row, 0, 0)
        moved_counts = (
            int(self.affinity_pod_count[last]),
            int(self.anti_affinity_pod_count[last]),
        )
        self._set_affinity_counts(last, 0, 0)
        if row != last:
            self._copy_row(last, row)
            self._set_affinity_counts(row, *moved_counts)
            self._stamp_pods(row)
            moved = self.names[last]
            self.names[row] = moved
            self.node_infos[row] = self.node_infos[last]
            self._row_of[moved] = row
        self.names.pop()
        self.node_infos.pop()
        self.label_version += 1

    def add_images(self, name: str, images: Iterable[ContainerImage]) -> None:
        """Record that node `name` holds `images`; a name new to the cluster takes this
        node's size, a name already held keeps the size it has."""
        self.image_version += 1
        for image in images:
            for image_name in image.names:
                holders = self.image_nodes.get(image_name)
                if holders is None:
                    self.image_nodes[image_name] = {name}
                    self.image_sizes[image_name] = image.size_bytes
                else:
                    holders.add(name)

    def remove_images(self, name: str, images: Iterable[ContainerImage]) -> None:
        """Forget that node `name` holds `images`; a name no node holds any more is dropped
        with its size."""
        self.image_version += 1
        for image in images:
            for image_name in image.names:
                holders = self.image_nodes.get(image_name)
                if holders is not None:
                    holders.discard(name)
                    if not holders:
                        del self.image_nodes[image_name]
                        del self.image_sizes[image_name]

    # ---- internals ---------------------------------------------------------------------

    def _per_row_arrays(self) -> list[str]:
        return [
            "allocatable",
            "requested",
            "non_zero_requested",
            "pod_count",
            "allowed_pods",
            "port_count",
            "affinity_pod_count",
            "anti_affinity_pod_count",
            "unschedulable",
            "taint_set_id",
            "pod_stamp",
        ]

    def _set_affinity_counts(self, row: int, affinity: int, anti_affinity: int) -> None:
        self.affinity_pods += affinity - int(self.affinity_pod_count[row])
        self.anti_affinity_pods += anti_affinity - int(self.anti_affinity_pod_count[row])
        self.affinity_pod_count[row] = affinity
        self.anti_affinity_pod_count[row] = anti_affinity

    def _stamp_pods(self, row: int) -> None:
        self.pod_clock += 1
        self.pod_stamp[row] = self.pod_clock
        self._stamped.append(row)
        if len(self._stamped) > _STAMP_LOG_LIMIT:
            dropped = len(self._stamped) // 2
            del self._stamped[:dropped]
            self._stamped_base += dropped

    def _copy_row(self, source: int, target: int) -> None:
        for attribute in self._per_row_arrays():
            array = getattr(self, attribute)
            array[target] = array[source]
        for column in self._label_columns.values():
            column.ids[target] = column.ids[source]

    def _ensure_capacity(self, needed: int) -> None:
        if needed <= self._capacity:
            return
        capacity = max(needed, self._capacity * 2)
        for attribute in self._per_row_arrays():
            array = getattr(self, attribute)
            grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
            grown[: len(array)] = array
            setattr(self, attribute, grown)
        for column in self._label_columns.values():
            ids = np.full(capacity, -1, dtype=np.int32)
            ids[: len(column.ids)] = column.ids
            column.ids = ids
        self._capacity = capacity

    def _ensure_resource(self, resource: str) -> None:
        if resource in self._resource_index:
            return
        self._resource_index[resource] = len(self.resource_names)
        self.resource_names.append(resource)
        extra = np.zeros((self._capacity, 1), dtype=np.int64)
        self.allocatable = np.hstack([self.allocatable, extra])
        self.requested = np.hstack([self.requested, extra.copy()])

    def _intern_taints(self, taints: tuple[Taint, ...]) -> int:
        found = self._taint_set_ids.get(taints)
        if found is None:
            found = len(self.taint_sets)
            self.taint_sets.append(taints)
            self._taint_set_ids[taints] = found
        return found

    def _build_label_column(self, key: str) -> LabelColumn:
        column = LabelColumn(self._capacity)
        for row, info in enumerate(self.node_infos):
            node = info.node
            value = node.labels.get(key) if node is not None else None
            if value is not None:
                column.ids[row] = column.intern(value)
        self._label_columns[key] = column
        return column


def labels_of(table: NodeTable, row: int) -> Mapping[str, str]:
    node = table.node_infos[row].node
    return node.labels if node is not None else {}
