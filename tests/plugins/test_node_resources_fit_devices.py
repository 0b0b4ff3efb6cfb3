"""NodeResourcesFit and extended resources that DeviceClasses provide: a node offering none of
such a resource leaves it to DynamicResources; one offering some through a device plugin is
checked as always."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.node_resources_fit import NodeResourcesFit
from plugins.node_resources_fit import NodeResourcesFitArgs
from plugins.node_resources_fit.hints import after_device_class_change
from plugins.node_resources_fit.hints import after_node_change
from plugins.node_resources_fit.requests import PRE_FILTER_STATE_KEY
from plugins.node_resources_fit.requests import PodResourceRequest
from scheduler.framework import CycleState
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node

GPU = "example.com/gpu"
FPGA = "example.com/fpga"
IMPLICIT = "deviceclass.resource.kubernetes.io/gpu"
GPU_CLASS = make_device_class("gpu", extended_resource_name=GPU)
QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def node(name: str, **allocatable: str | int) -> Node:
    resources: dict[str, str | int] = {"cpu": "4", "memory": "8Gi", "pods": 10, **allocatable}
    return make_node(name).capacity(**resources).obj()


def verdicts(pod: Pod, nodes: list[Node], classes: list[dict[str, Any]]) -> dict[str, str]:
    """Each node's verdict, per node and in bulk (which must agree)."""
    table = build_table(nodes)
    handle = FakeHandle(table, listers={"deviceclasses": classes})
    plugin = NodeResourcesFit(NodeResourcesFitArgs(), handle)
    state = CycleState()
    plugin.pre_filter(state, pod, table)
    each = filter_each_node(plugin, state, pod, table)
    bulk = filter_batch_as_statuses(plugin, state, pod, table)
    assert [(s.code, s.message()) for s in each] == [(s.code, s.message()) for s in bulk]
    return {
        info.name: "fits" if s.is_success else s.message()
        for info, s in zip(table.node_infos, each, strict=True)
    }


NODES = [node("bare"), node("plugin", **{GPU: 1}), node("used-up", **{GPU: 0})]


def test_a_provided_resource_is_left_to_devices_where_no_device_plugin_offers_it() -> None:
    pod = make_pod("p").req(**{GPU: 2}).obj()
    assert verdicts(pod, NODES, [GPU_CLASS]) == {
        "bare": "fits",
        "plugin": f"Insufficient {GPU}",
        "used-up": "fits",
    }


def test_without_a_class_the_resource_is_checked_everywhere() -> None:
    pod = make_pod("p").req(**{GPU: 1}).obj()
    assert verdicts(pod, NODES, []) == {
        "bare": f"Insufficient {GPU}",
        "plugin": "fits",
        "used-up": f"Insufficient {GPU}",
    }


def test_the_implicit_name_is_provided_by_its_class() -> None:
    pod = make_pod("p").req(**{IMPLICIT: 1, FPGA: 1}).obj()
    # The class provides the implicit name; nothing provides the fpga.
    assert verdicts(pod, [node("bare")], [make_device_class("gpu")]) == {
        "bare": f"Insufficient {FPGA}"
    }


@pytest.mark.parametrize("rows", [1, 80])
def test_bulk_and_per_node_agree_on_many_rows(rows: int) -> None:
    nodes = [node(f"n{i}", **({GPU: i % 3} if i % 2 else {})) for i in range(rows)]
    pod = make_pod("p").req(cpu="1", **{GPU: 2}).obj()
    found = verdicts(pod, nodes, [GPU_CLASS])
    for i, name in enumerate(sorted(found, key=lambda n: int(n[1:]))):
        offered = i % 3 if i % 2 else 0
        assert (found[name] == "fits") is (offered == 0 or offered >= 2)


def test_the_request_names_what_is_left_to_devices() -> None:
    table = build_table([node("bare")])
    handle = FakeHandle(table, listers={"deviceclasses": [GPU_CLASS]})
    plugin = NodeResourcesFit(NodeResourcesFitArgs(), handle)
    state = CycleState()
    plugin.pre_filter(state, make_pod("p").req(**{GPU: 1, FPGA: 1}).obj(), table)
    assert state.read(PRE_FILTER_STATE_KEY, PodResourceRequest).device_backed == {GPU}


# ---- QueueingHints ---------------------------------------------------------------------------


def test_a_class_starting_to_provide_a_resource_the_pod_asks_for_requeues_it() -> None:
    pod = make_pod("p").req(**{GPU: 1}).obj()
    plain = make_device_class("gpu")
    assert after_device_class_change(pod, None, GPU_CLASS) is QUEUE
    assert after_device_class_change(pod, plain, GPU_CLASS) is QUEUE
    assert after_device_class_change(pod, GPU_CLASS, GPU_CLASS) is SKIP
    assert after_device_class_change(pod, None, plain) is SKIP
    implicit = make_pod("q").req(**{IMPLICIT: 1}).obj()
    assert after_device_class_change(implicit, None, plain) is QUEUE
    # The implicit name never changes on update: an update requeues only for the explicit one.
    assert after_device_class_change(implicit, plain, make_device_class("gpu", "true")) is SKIP


def test_a_node_leaving_a_resource_to_devices_requeues_the_pod() -> None:
    handle = FakeHandle(listers={"deviceclasses": [GPU_CLASS]})
    plugin = NodeResourcesFit(NodeResourcesFitArgs(), handle)
    [node_hint] = [e.hint for e in plugin.events_to_register() if e.event.resource.name == "NODE"]
    assert node_hint is not None
    pod = make_pod("p").req(cpu="1", **{GPU: 1}).obj()
    before, after = node("n", cpu="2"), node("n", cpu="2", memory="16Gi")
    # Nothing the pod asks for grew, but the node offers no gpu: devices may serve it now.
    assert node_hint(pod, before, after) is QUEUE
    assert after_node_change(pod, before, after) is SKIP
