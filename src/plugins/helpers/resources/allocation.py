"""Inputs of the resource scoring strategies: per scored resource, a node's allocatable, what its
pods already take, and what they would take with the incoming pod.

Shared by NodeResourcesFit scoring and NodeResourcesBalancedAllocation, as upstream shares one
"resource allocation scorer" between them. Rules (upstream's):
- cpu and memory use the non-zero requests (100m / 200Mi for a container that sets none) unless
  `use_requested` (BalancedAllocation) asks for the plain requests;
- ephemeral-storage always uses plain requests;
- a scalar resource the pod does not request is left out, as is any resource the node does not
  offer (allocatable 0): its allocatable, allocated and requested all read 0, and every strategy
  skips entries whose allocatable is 0.

`row_allocations` reads the same lists as `node_allocation` from table rows, for the few rows a
memo refreshes: scoring them one by one in plain integers is cheaper than array calls there.

The batch forms read `scored_columns`: one entry per resource that is scored on at least one of
the rows, holding 1-D columns over the rows. Resources left out everywhere are simply absent,
which gives the same scores since every strategy skips them anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from plugins.helpers.extended_resources import DeviceTotals
from plugins.helpers.resources.names import is_scalar
from plugins.helpers.resources.row_columns import RowColumns
from plugins.helpers.resources.row_columns import Vector
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import pod_request_summary

Matrix = npt.NDArray[np.int64]

# A memo refreshing at most this many rows scores them one by one (`row_allocations`).
FEW_REFRESHED_ROWS = 16
# Quantities below this keep every strategy's integer products (by 100 and by the weights) far
# inside int64 and convert to float exactly, so the per-row forms give what the row forms give.
_EXACT_BOUND = 1 << 52


def has_pod_level_requests(pod: Pod) -> bool:
    """Whether the pod sets `spec.resources.requests`, which its containers' sum then yields to
    everywhere but in NodeResourcesFit's scoring."""
    spec = pod.raw.get("spec") or {}
    return bool((spec.get("resources") or {}).get("requests"))


def request_summary(pod: Pod, *, pod_level: bool = True) -> tuple[Mapping[str, int], int, int]:
    """The pod's requests, non-zero cpu and non-zero memory.

    `pod_level=False` sums the containers even where the pod sets `spec.resources`, as
    upstream's NodeResourcesFit scorer does (its Filter and BalancedAllocation use them).
    """
    if not pod_level and has_pod_level_requests(pod):
        return pod_request_summary(pod.raw.get("spec") or {}, pod_level=False)
    return pod.requests, pod.non_zero_cpu, pod.non_zero_memory


def pod_requests_for(
    pod: Pod, names: Sequence[str], *, use_requested: bool, pod_level: bool = True
) -> tuple[int, ...]:
    """The pod's request of each scored resource, in `names` order (`pod_level` as in
    `request_summary`)."""
    requests, non_zero_cpu, non_zero_memory = request_summary(pod, pod_level=pod_level)
    values = []
    for name in names:
        if name == CPU and not use_requested:
            values.append(non_zero_cpu)
        elif name == MEMORY and not use_requested:
            values.append(non_zero_memory)
        else:
            values.append(requests.get(name, 0))
    return tuple(values)


def scored(name: str, pod_request: int) -> bool:
    """Whether a resource takes part in scoring for this pod at all."""
    if name in (CPU, MEMORY, EPHEMERAL_STORAGE):
        return True
    return pod_request != 0 and is_scalar(name)


@dataclass(frozen=True, slots=True)
class NodeAllocation:
    """One node's lists, aligned with the scored resources."""

    allocatable: list[int]
    allocated: list[int]
    requested: list[int]


def node_allocation(
    info: NodeInfo,
    names: Sequence[str],
    pod_requests: Sequence[int],
    *,
    use_requested: bool,
    devices: DeviceTotals | None = None,
) -> NodeAllocation:
    """`devices`: where the node offers none of a resource a DeviceClass provides, its devices
    of that class are its allocatable and those allocated its use."""
    node_allocatable = info.node.allocatable if info.node is not None else {}
    allocatable, allocated, requested = [], [], []
    for name, pod_request in zip(names, pod_requests, strict=True):
        capacity = node_allocatable.get(name, 0) if scored(name, pod_request) else 0
        in_use: int | None = None
        node = info.node
        if capacity == 0 and pod_request and devices and name in devices.provided and node:
            capacity, in_use = devices.count(name, node) or (0, 0)
        if capacity == 0:
            allocatable.append(0)
            allocated.append(0)
            requested.append(0)
            continue
        if in_use is None:
            in_use = _in_use(info, name, use_requested)
        allocatable.append(capacity)
        allocated.append(in_use)
        requested.append(in_use + pod_request)
    return NodeAllocation(allocatable, allocated, requested)


def _in_use(info: NodeInfo, name: str, use_requested: bool) -> int:
    """What the node's pods take of the resource (cpu and memory as non-zero requests unless
    `use_requested`)."""
    if name == CPU and not use_requested:
        return info.non_zero_cpu
    if name == MEMORY and not use_requested:
        return info.non_zero_memory
    return info.requested.get(name, 0)


def row_allocations(
    table: NodeTable,
    rows: Rows,
    names: Sequence[str],
    pod_requests: Sequence[int],
    *,
    use_requested: bool,
) -> list[NodeAllocation] | None:
    """`node_allocation` of each row, read from the table; None when a quantity is so large
    that the row forms' int64 arithmetic could differ from plain integers (use those then)."""
    if any(not 0 <= request < _EXACT_BOUND for request in pod_requests):
        return None
    # Per scored resource: its pod request and the columns of its allocatable and usage.
    sources: list[tuple[int, int | None, bool, int]] = []
    for name, pod_request in zip(names, pod_requests, strict=True):
        column = table.resource_column(name)
        if column is None or not scored(name, pod_request):
            sources.append((pod_request, None, False, 0))
        elif name == CPU and not use_requested:
            sources.append((pod_request, column, True, 0))
        elif name == MEMORY and not use_requested:
            sources.append((pod_request, column, True, 1))
        else:
            sources.append((pod_request, column, False, column))
    found = []
    for row in rows.tolist():
        node_allocatable = table.allocatable[row].tolist()
        node_requested = table.requested[row].tolist()
        non_zero = table.non_zero_requested[row].tolist()
        allocatable, allocated, requested = [], [], []
        for pod_request, column, non_zero_usage, usage_column in sources:
            capacity = 0 if column is None else node_allocatable[column]
            if capacity == 0:
                allocatable.append(0)
                allocated.append(0)
                requested.append(0)
                continue
            in_use = non_zero[usage_column] if non_zero_usage else node_requested[usage_column]
            if capacity >= _EXACT_BOUND or not 0 <= in_use < _EXACT_BOUND:
                return None
            allocatable.append(capacity)
            allocated.append(in_use)
            requested.append(in_use + pod_request)
        found.append(NodeAllocation(allocatable, allocated, requested))
    return found


@dataclass(frozen=True, slots=True)
class ScoredColumn:
    """One scored resource over the rows.

    `allocated` is what the node's pods already take (the pod not included); on rows where
    `allocatable` is 0 it is meaningless and every strategy skips the entry. Both arrays may be
    views of the node table: read them, never write into them.
    """

    position: int  # index among the configured resources, for the resource's weight
    allocatable: Vector
    allocated: Vector
    pod_request: int
    offered_everywhere: bool  # allocatable is non-zero on every row

    def divisor(self) -> Vector:
        """`allocatable`, with 1 where it is 0 so that dividing by it is always defined."""
        if self.offered_everywhere:
            return self.allocatable
        safe: Vector = np.where(self.allocatable == 0, 1, self.allocatable)
        return safe

    def offered(self) -> npt.NDArray[np.bool_]:
        offered: npt.NDArray[np.bool_] = self.allocatable != 0
        return offered


def scored_columns(
    table: NodeTable,
    rows: Rows,
    names: Sequence[str],
    pod_requests: Sequence[int],
    *,
    use_requested: bool,
) -> list[ScoredColumn]:
    """The scored resources (in `names` order) that at least one of `rows` offers."""
    columns = RowColumns(table, rows)
    found = []
    for position, (name, pod_request) in enumerate(zip(names, pod_requests, strict=True)):
        column = table.resource_column(name)
        if column is None or not scored(name, pod_request):
            continue
        allocatable = columns.allocatable(column)
        offered = int(np.count_nonzero(allocatable))
        if offered == 0:
            continue
        if name == CPU and not use_requested:
            allocated = columns.non_zero_requested(0)
        elif name == MEMORY and not use_requested:
            allocated = columns.non_zero_requested(1)
        else:
            allocated = columns.requested(column)
        found.append(
            ScoredColumn(position, allocatable, allocated, pod_request, offered == columns.count)
        )
    return found
