"""Random sequences of node and pod events: the incrementally kept table must always equal one
recomputed from scratch, and NodeInfos must hold exactly the pods a simple model says they do."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from scheduler.backend.cache import CacheError
from scheduler.backend.cache import SchedulerCache
from scheduler.framework.node_table import NodeTable
from scheduler.objects.labels import LabelSelector
from scheduler.objects.labels import parse_label_selector
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod
from scheduler.testing.plugin_harness import build_table

NODE_NAMES = ["n0", "n1", "n2", "n3"]
POD_NAMES = ["p0", "p1", "p2", "p3", "p4", "p5"]
LABEL_KEYS = [ZONE_LABEL, "disk", HOSTNAME_LABEL]
GPU = "example.com/gpu"

node_names = st.sampled_from(NODE_NAMES)
pod_names = st.sampled_from(POD_NAMES)


@st.composite
def nodes(draw: st.DrawFn, name: str) -> Node:
    builder = make_node(name).capacity(
        cpu=draw(st.sampled_from(["2", "4"])), memory="8Gi", pods=draw(st.sampled_from([10, 110]))
    )
    if draw(st.booleans()):
        builder.allocatable(**{GPU: 4})
    zone = draw(st.sampled_from([None, "a", "b"]))
    if zone is not None:
        builder.zone(zone)
    disk = draw(st.sampled_from([None, "ssd", "hdd"]))
    if disk is not None:
        builder.label("disk", disk)
    for key in draw(st.sampled_from([(), ("gpu",), ("gpu", "spot")])):
        builder.taint(key)
    for image in draw(st.sampled_from([(), ("nginx",), ("nginx", "redis")])):
        builder.image(image, 1000)
    return builder.unschedulable(draw(st.booleans())).obj()


@st.composite
def pods(draw: st.DrawFn, name: str, node: str | None) -> Pod:
    builder = make_pod(name).req(cpu=draw(st.sampled_from(["0", "100m", "1"])))
    if draw(st.booleans()):
        builder.req(**{GPU: 1})
    if draw(st.booleans()):
        builder.host_port(80)
    if draw(st.booleans()):
        builder.pod_affinity("required", ZONE_LABEL, {"app": "x"}, anti=draw(st.booleans()))
    if node is not None:
        builder.node(node)
    builder.phase(draw(st.sampled_from(["Running", "Running", "Succeeded"])))
    return builder.obj()


# Parts of a node's raw object the table depends on, changed one at a time.
NODE_PARTS = [
    "metadata.labels",
    "spec.taints",
    "spec.unschedulable",
    "status.allocatable",
    "status.images",
]

ZONE_A = parse_label_selector({"matchLabels": {ZONE_LABEL: "a"}})
NOT_SSD = parse_label_selector(
    {"matchExpressions": [{"key": "disk", "operator": "NotIn", "values": ["ssd"]}]}
)


class CacheMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.cache = SchedulerCache()
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}  # every cached pod, as placed
        self.assumed: set[str] = set()

    # ---- nodes -------------------------------------------------------------------------

    @rule(data=st.data(), name=node_names)
    def add_node(self, data: st.DataObject, name: str) -> None:
        node = data.draw(nodes(name))
        self.cache.add_node(node)
        self.nodes[name] = node

    @rule(data=st.data(), name=node_names)
    def update_node(self, data: st.DataObject, name: str) -> None:
        node = data.draw(nodes(name))
        self.cache.update_node(self.nodes.get(name), node)
        self.nodes[name] = node

    @rule(data=st.data(), name=node_names, part=st.sampled_from(NODE_PARTS))
    def change_one_part_of_node(self, data: st.DataObject, name: str, part: str) -> None:
        """Change labels, taints, allocatable, cordon or images alone, so that a missed
        comparison cannot hide behind another field that changed at the same time."""
        old = self.nodes.get(name)
        if old is None:
            return
        donor = data.draw(nodes(name)).raw
        raw = copy.deepcopy(dict(old.raw))
        section, field = part.split(".")
        if field in donor[section]:
            raw[section][field] = copy.deepcopy(donor[section][field])
        else:
            raw[section].pop(field, None)
        new = Node.from_dict(raw)
        self.cache.update_node(old, new)
        self.nodes[name] = new

    @rule(name=node_names)
    def heartbeat_node(self, name: str) -> None:
        old = self.nodes.get(name)
        if old is None:
            return
        raw = copy.deepcopy(dict(old.raw))
        raw["metadata"]["resourceVersion"] = str(int(old.resource_version or "0") + 1)
        new = Node.from_dict(raw)
        version = self.cache.table.label_version
        self.cache.update_node(old, new)
        self.nodes[name] = new
        assert self.cache.table.label_version == version

    @rule(name=node_names)
    def remove_node(self, name: str) -> None:
        self.cache.remove_node(make_node(name).obj())
        self.nodes.pop(name, None)

    # ---- pods --------------------------------------------------------------------------

    @rule(data=st.data(), name=pod_names, node=node_names)
    def informer_adds_pod(self, data: st.DataObject, name: str, node: str) -> None:
        pod = data.draw(pods(name, node))
        self.cache.add_pod(pod)
        self._model_bound(pod)

    @rule(data=st.data(), name=pod_names, node=st.none() | node_names)
    def informer_updates_pod(self, data: st.DataObject, name: str, node: str | None) -> None:
        pod = data.draw(pods(name, node))
        old = self.pods.get(pod.key, pod)
        self.cache.update_pod(old, pod)
        if node is not None:
            self._model_bound(pod)
        elif pod.key not in self.assumed:
            self.pods.pop(pod.key, None)

    @rule(name=pod_names, bound=st.booleans())
    def informer_removes_pod(self, name: str, bound: bool) -> None:
        key = f"default/{name}"
        deleted = make_pod(name).node("n0" if bound else "").obj()
        self.cache.remove_pod(deleted)
        if bound or key not in self.assumed:
            self.pods.pop(key, None)
            self.assumed.discard(key)

    @rule(data=st.data(), name=pod_names, node=node_names)
    def assume(self, data: st.DataObject, name: str, node: str) -> None:
        pod = data.draw(pods(name, None).filter(lambda p: not p.is_terminal))
        if pod.key in self.pods:
            with pytest.raises(CacheError):
                self.cache.assume_pod(pod, node)
            return
        assumed = self.cache.assume_pod(pod, node)
        assert assumed.node_name == node
        self.pods[pod.key] = assumed
        self.assumed.add(pod.key)

    @precondition(lambda self: bool(self.assumed))
    @rule(data=st.data(), same_node=st.booleans(), via_update=st.booleans())
    def informer_confirms_assumed(
        self, data: st.DataObject, same_node: bool, via_update: bool
    ) -> None:
        key = data.draw(st.sampled_from(sorted(self.assumed)))
        assumed = self.pods[key]
        node = assumed.node_name if same_node else data.draw(node_names)
        pod = data.draw(pods(assumed.name, node))
        if via_update:
            self.cache.update_pod(make_pod(assumed.name).obj(), pod)
        else:
            self.cache.add_pod(pod)
        self._model_bound(pod)

    @precondition(lambda self: bool(self.assumed))
    @rule(data=st.data(), as_assumed=st.booleans())
    def forget_assumed(self, data: st.DataObject, as_assumed: bool) -> None:
        key = data.draw(st.sampled_from(sorted(self.assumed)))
        assumed = self.pods[key]
        # The binding cycle may hand back the placed copy or the pod as it was queued.
        self.cache.forget_pod(assumed if as_assumed else make_pod(assumed.name).obj())
        del self.pods[key]
        self.assumed.discard(key)

    @rule(name=pod_names, node=node_names)
    def forget_refused(self, name: str, node: str) -> None:
        key = f"default/{name}"
        cached = self.pods.get(key)
        if key in self.assumed and cached is not None and cached.node_name == node:
            return
        with pytest.raises(CacheError):
            self.cache.forget_pod(make_pod(name).node(node).obj())

    @rule(name=pod_names)
    def finish_binding(self, name: str) -> None:
        self.cache.finish_binding(make_pod(name).obj())

    def _model_bound(self, pod: Pod) -> None:
        self.assumed.discard(pod.key)
        if pod.is_terminal:
            self.pods.pop(pod.key, None)
        else:
            self.pods[pod.key] = pod

    # ---- invariants --------------------------------------------------------------------

    @invariant()
    def rows_are_consistent(self) -> None:
        table = self.cache.table
        assert sorted(table.names) == sorted(self.nodes)
        assert sorted(self.cache.node_names()) == sorted(self.nodes)
        assert len(table.node_infos) == table.size == len(self.nodes)
        for row, name in enumerate(table.names):
            assert table.row_of(name) == row
            assert table.node_infos[row] is self.cache.node_info(name)
            assert table.node_infos[row].node is self.nodes[name]
        for name in NODE_NAMES:
            if name not in self.nodes:
                assert self.cache.node_info(name) is None
                assert table.row_of(name) is None

    @invariant()
    def node_infos_hold_the_model_pods(self) -> None:
        for name, node in self.nodes.items():
            info = self.cache.node_info(name)
            assert info is not None and info.node is node
            expected = {k for k, p in self.pods.items() if p.node_name == name}
            assert set(info.pods) == expected
        for name in POD_NAMES:
            key = f"default/{name}"
            assert self.cache.get_pod(key) is self.pods.get(key)
            assert self.cache.is_assumed(key) == (key in self.assumed)
        holders = set(self.nodes) | {p.node_name for p in self.pods.values()}
        assert self.cache.sizes() == {
            "nodes": len(holders),
            "pods": len(self.pods),
            "assumed_pods": len(self.assumed),
        }

    @invariant()
    def usage_columns_match_the_model(self) -> None:
        table = self.cache.table
        for name in self.nodes:
            row = table.row_of(name)
            assert row is not None
            on_node = [p for p in self.pods.values() if p.node_name == name]
            requested: Counter[str] = Counter()
            for pod in on_node:
                requested.update(pod.requests)
            for resource in {*table.resource_names, *requested}:
                assert table.requested_of(resource)[row] == requested[resource], resource
            assert list(table.non_zero_requested[row]) == [
                sum(p.non_zero_cpu for p in on_node),
                sum(p.non_zero_memory for p in on_node),
            ]
            assert table.pod_count[row] == len(on_node)
            assert table.port_count[row] == sum(len(p.host_ports) for p in on_node)
            assert table.affinity_pod_count[row] == sum(p.has_affinity_terms for p in on_node)
            assert table.anti_affinity_pod_count[row] == sum(
                p.has_required_anti_affinity for p in on_node
            )
        # The table's totals, kept as rows change, are those of the nodes it holds.
        on_nodes = [p for p in self.pods.values() if p.node_name in self.nodes]
        assert table.affinity_pods == sum(p.has_affinity_terms for p in on_nodes)
        assert table.anti_affinity_pods == sum(p.has_required_anti_affinity for p in on_nodes)

    @invariant()
    def node_columns_match_the_model(self) -> None:
        table = self.cache.table
        for name, node in self.nodes.items():
            row = table.row_of(name)
            assert row is not None
            for resource in {*table.resource_names, *node.allocatable}:
                expected = node.allocatable.get(resource, 0)
                assert table.allocatable_of(resource)[row] == expected, resource
            assert table.allowed_pods[row] == node.allocatable.get("pods", 0)
            assert bool(table.unschedulable[row]) is node.unschedulable
            assert table.taint_sets[table.taint_set_id[row]] == node.taints
            for key in LABEL_KEYS:
                ids, values = table.label_ids(key)
                assert (None if ids[row] < 0 else values[ids[row]]) == node.labels.get(key)
        for selector in (ZONE_A, NOT_SSD):
            assert isinstance(selector, LabelSelector)
            expected_mask = [selector.matches(self.nodes[n].labels) for n in table.names]
            assert table.match_selector(selector).tolist() == expected_mask
        images: dict[str, set[str]] = {}
        for name, node in self.nodes.items():
            for image in node.images:
                for image_name in image.names:
                    images.setdefault(image_name, set()).add(name)
        assert table.image_nodes == images

    @invariant()
    def table_equals_one_rebuilt_from_scratch(self) -> None:
        live = self.cache.table
        fresh = build_table(self.nodes.values(), self.pods.values())
        for name in self.nodes:
            assert _row(live, name) == _row(fresh, name), name


def _row(table: NodeTable, name: str) -> dict[str, Any]:
    row = table.row_of(name)
    assert row is not None
    taint_set = table.taint_sets[table.taint_set_id[row]]
    values: dict[str, Any] = {
        "taints": taint_set,
        "labels": {
            key: (None if ids[row] < 0 else values[ids[row]])
            for key in LABEL_KEYS
            for ids, values in [table.label_ids(key)]
        },
    }
    for resource in table.resource_names:
        values[f"allocatable/{resource}"] = int(table.allocatable_of(resource)[row])
        values[f"requested/{resource}"] = int(table.requested_of(resource)[row])
    for column in (
        "non_zero_requested",
        "pod_count",
        "allowed_pods",
        "port_count",
        "affinity_pod_count",
        "anti_affinity_pod_count",
        "unschedulable",
    ):
        values[column] = np.asarray(getattr(table, column)[row]).tolist()
    # Columns for resources only one table has seen must be zero in it.
    return {
        k: v
        for k, v in values.items()
        if not (k.startswith(("allocatable/", "requested/")) and v == 0)
    }


CacheMachine.TestCase.settings = settings(max_examples=100, stateful_step_count=40, deadline=None)
test_cache_state_machine = CacheMachine.TestCase
