"""A small world for DynamicResources tests: nodes, DRA objects in listers, the in-memory
cluster as the API for PreBind, and helpers to run the extension points in order."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from plugins.dynamic_resources import DynamicResources
from plugins.dynamic_resources import DynamicResourcesArgs
from scheduler.cluster.sim import SimCluster
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.clock import Clock
from scheduler.testing import FakeClock
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from tests.plugins.test_volume_binding_prebind import SimLister

DRIVER = "gpu.example.com"
CLASS = "gpu"
DRA_RESOURCES = ("resourceclaims", "resourceslices", "deviceclasses", "devicetaintrules")


class World:
    def __init__(
        self,
        objects: Iterable[Mapping[str, Any]],
        nodes: Sequence[str] = ("worker",),
        *,
        labels: Mapping[str, Mapping[str, str]] | None = None,
        allocatable: Mapping[str, Mapping[str, str | int]] | None = None,
        filter_timeout: float = 10.0,
        clock: Clock | None = None,
    ) -> None:
        self.clock = clock or FakeClock()
        self.sim = SimCluster(self.clock)
        node_builders = []
        for name in nodes:
            builder = make_node(name)
            for key, value in (labels or {}).get(name, {}).items():
                builder = builder.label(key, value)
            if name in (allocatable or {}):
                builder = builder.allocatable(**(allocatable or {})[name])
            node_builders.append(builder)
        self.sim.load([*(n.dict() for n in node_builders), *objects])
        self.table: NodeTable = build_table(n.obj() for n in node_builders)
        self.handle = FakeHandle(self.table, clock=self.clock, api=self.sim)
        for resource in DRA_RESOURCES:
            self.handle._listers[resource] = SimLister(self.sim, resource)  # type: ignore[assignment]
        self.plugin = DynamicResources(
            DynamicResourcesArgs.model_validate({"filterTimeout": f"{filter_timeout}s"}),
            self.handle,
        )

    def claim(self, name: str, namespace: str = "default") -> dict[str, Any]:
        return next(
            c
            for c in self.sim.objects("resourceclaims")
            if c["metadata"]["name"] == name and c["metadata"]["namespace"] == namespace
        )

    def pre_filter(self, pod: Pod) -> tuple[CycleState, Status]:
        state = CycleState()
        _, status = self.plugin.pre_filter(state, pod, self.table)
        return state, status

    def filter(self, pod: Pod) -> tuple[CycleState, dict[str, Status]]:
        """PreFilter, then Filter on every node in both forms, which must agree."""
        state, status = self.pre_filter(pod)
        assert status.is_success, status
        per_node = filter_each_node(self.plugin, state, pod, self.table)
        batch = filter_batch_as_statuses(self.plugin, state, pod, self.table)
        assert [(s.code, s.message()) for s in per_node] == [(s.code, s.message()) for s in batch]
        names = [info.name for info in self.table.node_infos]
        return state, dict(zip(names, per_node, strict=True))

    def reserve(self, pod: Pod, node: str) -> CycleState:
        state, statuses = self.filter(pod)
        assert statuses[node].is_success, statuses[node]
        status = self.plugin.reserve(state, pod, node)
        assert status.is_success, status
        return state


def unresolvable(message: str) -> tuple[Code, str]:
    return (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def outcome(status: Status) -> tuple[Code, str]:
    return (status.code, status.message())
