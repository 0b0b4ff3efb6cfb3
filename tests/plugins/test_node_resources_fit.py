"""NodeResourcesFit: PreFilter, Filter (per node and batch), events and QueueingHints."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pytest

from plugins.node_resources_fit import SPEC
from plugins.node_resources_fit import NodeResourcesFit
from plugins.node_resources_fit import NodeResourcesFitArgs
from plugins.node_resources_fit.fits_batch import _distinct_patterns
from plugins.node_resources_fit.hints import after_node_change
from plugins.node_resources_fit.hints import after_pod_event
from plugins.node_resources_fit.requests import PRE_FILTER_STATE_KEY
from plugins.node_resources_fit.requests import PodResourceRequest
from scheduler.framework import ActionType
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework import Status
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node

GPU = "example.com/gpu"
FPGA = "example.com/fpga"
NIC = "vendor.io/nic"
HUGEPAGES = "hugepages-2Mi"
PREFIXED_NATIVE = "subdomain.kubernetes.io/something"

OK = (Code.SUCCESS, ())


def node(name: str = "n1", /, **capacity: str | int) -> Node:
    resources: dict[str, str | int] = {"cpu": "4", "memory": "8Gi", "pods": 10}
    resources.update(capacity)
    return make_node(name).capacity(**resources).obj()


def bound(name: str, node_name: str = "n1", /, **requests: str | int) -> Pod:
    builder = make_pod(name).node(node_name)
    return (builder.req(**requests) if requests else builder).obj()


def outcome(status: Status) -> tuple[Code, tuple[str, ...]]:
    return status.code, status.reasons


def run_filter(
    pod: Pod, nodes: list[Node], existing: list[Pod], args: dict[str, Any] | None = None
) -> list[tuple[Code, tuple[str, ...]]]:
    """Filter every node with both forms; they must agree, and the common answer is returned."""
    table = build_table(nodes, existing)
    plugin = NodeResourcesFit(NodeResourcesFitArgs.model_validate(args or {}), FakeHandle(table))
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, table)
    assert status.is_success
    per_node = [outcome(s) for s in filter_each_node(plugin, state, pod, table)]
    batch = [outcome(s) for s in filter_batch_as_statuses(plugin, state, pod, table)]
    assert per_node == batch
    return per_node


@dataclass
class FilterCase:
    id: str
    pod: Pod
    want: tuple[Code, tuple[str, ...]]
    capacity: dict[str, str | int] = field(default_factory=dict)
    existing: list[Pod] = field(default_factory=list)
    args: dict[str, Any] = field(default_factory=dict)


UNSCHEDULABLE = Code.UNSCHEDULABLE
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

FILTER_CASES = [
    FilterCase("fits", make_pod("p").req(cpu="1", memory="1Gi").obj(), OK),
    FilterCase(
        "no requests on a node with pod slots left",
        make_pod("p").obj(),
        OK,
        capacity={"cpu": "100m", "memory": "1Mi"},
        existing=[bound("a", cpu="100m", memory="1Mi")],
    ),
    FilterCase(
        "exactly the free amount fits",
        make_pod("p").req(cpu="1500m").obj(),
        OK,
        capacity={"cpu": "2"},
        existing=[bound("a", cpu="500m")],
    ),
    FilterCase(
        "free cpu too small: preemption could help",
        make_pod("p").req(cpu="1").obj(),
        (UNSCHEDULABLE, ("Insufficient cpu",)),
        capacity={"cpu": "2"},
        existing=[bound("a", cpu="1500m")],
    ),
    FilterCase(
        "request beyond the whole allocatable is unresolvable",
        make_pod("p").req(cpu="5").obj(),
        (UNRESOLVABLE, ("Insufficient cpu",)),
    ),
    FilterCase(
        "memory",
        make_pod("p").req(memory="4Gi").obj(),
        (UNSCHEDULABLE, ("Insufficient memory",)),
        existing=[bound("a", memory="5Gi")],
    ),
    FilterCase(
        "ephemeral-storage",
        make_pod("p").req(**{"ephemeral-storage": "2Gi"}).obj(),
        (UNSCHEDULABLE, ("Insufficient ephemeral-storage",)),
        capacity={"ephemeral-storage": "10Gi"},
        existing=[bound("a", **{"ephemeral-storage": "9Gi"})],
    ),
    FilterCase(
        "node offers no ephemeral-storage at all",
        make_pod("p").req(**{"ephemeral-storage": "1"}).obj(),
        (UNRESOLVABLE, ("Insufficient ephemeral-storage",)),
    ),
    FilterCase(
        "too many pods even without requests",
        make_pod("p").obj(),
        (UNSCHEDULABLE, ("Too many pods",)),
        capacity={"pods": 1},
        existing=[bound("a")],
    ),
    FilterCase(
        "node without a pods allocatable admits nothing",
        make_pod("p").obj(),
        (UNSCHEDULABLE, ("Too many pods",)),
        capacity={"pods": 0},
    ),
    FilterCase(
        "every reason in upstream order",
        make_pod("p")
        .req(cpu="2", memory="2Gi", **{"ephemeral-storage": "1Gi", GPU: "1", FPGA: "1"})
        .obj(),
        (
            UNSCHEDULABLE,
            (
                "Too many pods",
                "Insufficient cpu",
                "Insufficient memory",
                "Insufficient ephemeral-storage",
                f"Insufficient {FPGA}",
                f"Insufficient {GPU}",
            ),
        ),
        capacity={"pods": 1, "ephemeral-storage": "1Gi", GPU: 1, FPGA: 1},
        existing=[
            bound("a", cpu="3", memory="7Gi", **{"ephemeral-storage": "1", GPU: "1", FPGA: "1"})
        ],
    ),
    FilterCase(
        "one unresolvable shortfall makes the whole node unresolvable",
        make_pod("p").req(cpu="1", **{GPU: 2}).obj(),
        (UNRESOLVABLE, ("Too many pods", "Insufficient cpu", f"Insufficient {GPU}")),
        capacity={"pods": 1, GPU: 1},
        existing=[bound("a", cpu="4")],
    ),
    FilterCase(
        "extended resource absent from the node",
        make_pod("p").req(**{GPU: 1}).obj(),
        (UNRESOLVABLE, (f"Insufficient {GPU}",)),
    ),
    FilterCase(
        "extended resource used up",
        make_pod("p").req(**{GPU: 1}).obj(),
        (UNSCHEDULABLE, (f"Insufficient {GPU}",)),
        capacity={GPU: 2},
        existing=[bound("a", **{GPU: 2})],
    ),
    FilterCase(
        "hugepages",
        make_pod("p").req(**{HUGEPAGES: "4Mi"}).obj(),
        (UNSCHEDULABLE, (f"Insufficient {HUGEPAGES}",)),
        capacity={HUGEPAGES: "4Mi"},
        existing=[bound("a", **{HUGEPAGES: "2Mi"})],
    ),
    FilterCase(
        "ignoredResources skips that extended resource",
        make_pod("p").req(**{GPU: 1, FPGA: 1}).obj(),
        (UNRESOLVABLE, (f"Insufficient {FPGA}",)),
        args={"ignoredResources": [GPU]},
    ),
    FilterCase(
        "ignoredResourceGroups skips every resource of the group",
        make_pod("p").req(**{GPU: 1, FPGA: 1, NIC: 1}).obj(),
        (UNRESOLVABLE, (f"Insufficient {NIC}",)),
        args={"ignoredResourceGroups": ["example.com"]},
    ),
    FilterCase(
        "hugepages cannot be ignored",
        make_pod("p").req(**{HUGEPAGES: "2Mi"}).obj(),
        (UNRESOLVABLE, (f"Insufficient {HUGEPAGES}",)),
        args={"ignoredResources": [HUGEPAGES]},
    ),
    FilterCase(
        "kubernetes.io-prefixed resources are checked and cannot be ignored",
        make_pod("p").req(**{PREFIXED_NATIVE: 1}).obj(),
        (UNRESOLVABLE, (f"Insufficient {PREFIXED_NATIVE}",)),
        args={
            "ignoredResources": [PREFIXED_NATIVE],
            "ignoredResourceGroups": ["subdomain.kubernetes.io"],
        },
    ),
    FilterCase(
        "unprefixed unknown resources are not checked",
        make_pod("p").req(foo=5).obj(),
        OK,
    ),
    FilterCase(
        "an init container larger than the app containers sets the request",
        make_pod("p").req(cpu="1").init_container(cpu="3").obj(),
        (UNSCHEDULABLE, ("Insufficient cpu",)),
        existing=[bound("a", cpu="2")],
    ),
    FilterCase(
        "sidecars run beside later init containers",
        # sidecar 1 + init 1.5 = 2.5 cpu at peak, above the steady 1 + 1 = 2
        make_pod("p")
        .req(cpu="1")
        .init_container(sidecar=True, cpu="1")
        .init_container(cpu="1500m")
        .obj(),
        (UNSCHEDULABLE, ("Insufficient cpu",)),
        existing=[bound("a", cpu="1600m")],
    ),
    FilterCase(
        "sidecars fit when the peak fits",
        make_pod("p")
        .req(cpu="1")
        .init_container(sidecar=True, cpu="1")
        .init_container(cpu="1500m")
        .obj(),
        OK,
        existing=[bound("a", cpu="1500m")],
    ),
    FilterCase(
        "pod overhead counts",
        make_pod("p").req(memory="1Gi").overhead(memory="512Mi").obj(),
        (UNSCHEDULABLE, ("Insufficient memory",)),
        capacity={"memory": "2Gi"},
        existing=[bound("a", memory="600Mi")],
    ),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=[c.id for c in FILTER_CASES])
def test_filter(case: FilterCase) -> None:
    existing = list(case.existing)
    assert run_filter(case.pod, [node(**case.capacity)], existing, case.args) == [case.want]


def test_filter_reasons_differ_per_node_in_one_batch() -> None:
    nodes = [
        node("roomy"),
        node("busy"),
        node("small", cpu="500m"),
        node("full", pods=1),
        node("busy2"),
    ]
    existing = [
        bound("a", "busy", cpu="3500m"),
        bound("b", "full"),
        bound("c", "busy2", cpu="3500m", memory="8000Mi"),
    ]
    pod = make_pod("p").req(cpu="1", memory="200Mi").obj()
    assert run_filter(pod, nodes, existing) == [
        OK,
        (UNSCHEDULABLE, ("Insufficient cpu",)),
        (UNRESOLVABLE, ("Insufficient cpu",)),
        (UNSCHEDULABLE, ("Too many pods",)),
        (UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory")),
    ]


def test_pre_filter_stores_the_effective_request_once() -> None:
    pod = make_pod("p").req(cpu="1", **{GPU: 2}).init_container(memory="1Gi").obj()
    table = build_table([node()])
    plugin = NodeResourcesFit(NodeResourcesFitArgs(), FakeHandle(table))
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, table)
    assert result is None
    assert status.is_success
    assert plugin.pre_filter_extensions() is None
    request = state.read(PRE_FILTER_STATE_KEY, PodResourceRequest)
    assert (request.cpu, request.memory, request.scalars) == (1000, 1 << 30, ((GPU, 2),))


def test_filter_without_pre_filter_is_an_error() -> None:
    table = build_table([node()])
    plugin = NodeResourcesFit(NodeResourcesFitArgs(), FakeHandle(table))
    pod = make_pod("p").obj()
    status = plugin.filter(CycleState(), pod, table.node_infos[0])
    assert status.code is Code.ERROR
    assert "PreFilterNodeResourcesFit" in status.message()
    batch = plugin.filter_nodes(CycleState(), pod, table, table.all_rows())
    assert np.array_equal(batch.codes, [Code.ERROR])


def test_spec_names_the_plugin_and_its_args() -> None:
    assert SPEC.name == "NodeResourcesFit"
    assert SPEC.args_model is NodeResourcesFitArgs
    assert set(SPEC.extension_points) == {"PreFilter", "Filter", "PreScore", "Score"}


# ---- events and QueueingHints -------------------------------------------------------------


def test_events_to_register() -> None:
    plugin = NodeResourcesFit(NodeResourcesFitArgs(), FakeHandle())
    events = {e.event.resource: e for e in plugin.events_to_register()}
    assert set(events) == {EventResource.POD, EventResource.NODE, EventResource.DEVICE_CLASS}
    class_event = events[EventResource.DEVICE_CLASS]
    assert class_event.event.action == ActionType.ADD | ActionType.UPDATE
    assert class_event.hint is not None
    pod_event, node_event = events[EventResource.POD], events[EventResource.NODE]
    assert pod_event.event.action == ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN
    assert node_event.event.action == ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
    assert pod_event.hint is not None
    assert node_event.hint is not None


QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
TARGET = make_pod("target").uid("target-uid").req(cpu="2").obj()


def _with_cpu(name: str, cpu: str, node_name: str = "n1", **extra: str | int) -> Pod:
    builder = make_pod(name).uid(f"{name}-uid").req(cpu=cpu, **extra)
    return (builder.node(node_name) if node_name else builder).obj()


POD_HINT_CASES = [
    ("assigned pod deleted", _with_cpu("a", "1"), None, QUEUE),
    ("unscheduled pod deleted", _with_cpu("a", "1", node_name=""), None, SKIP),
    (
        "nominated pod deleted",
        make_pod("a").req(cpu="1").nominated("n1").obj(),
        None,
        QUEUE,
    ),
    ("assigned pod freed cpu", _with_cpu("a", "2"), _with_cpu("a", "1"), QUEUE),
    (
        "assigned pod freed only memory, which the target does not request",
        _with_cpu("a", "1", memory="2Gi"),
        _with_cpu("a", "1", memory="1Gi"),
        SKIP,
    ),
    (
        "unscheduled pod shrank",
        _with_cpu("a", "2", node_name=""),
        _with_cpu("a", "1", node_name=""),
        SKIP,
    ),
    (
        "the target itself shrank",
        make_pod("target").uid("target-uid").req(cpu="3").obj(),
        TARGET,
        QUEUE,
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [c[1:] for c in POD_HINT_CASES],
    ids=[c[0] for c in POD_HINT_CASES],
)
def test_pod_event_hint(old: Pod, new: Pod | None, want: QueueingHint) -> None:
    assert after_pod_event(TARGET, old, new) is want


def test_pod_event_hint_accepts_raw_api_objects() -> None:
    deleted = make_pod("a").req(cpu="1").node("n1").dict()
    assert after_pod_event(TARGET, deleted, None) is QUEUE


NODE_HINT_CASES = [
    ("node added that fits", None, node(cpu="2"), QUEUE),
    ("node added too small", None, node(cpu="1"), SKIP),
    ("node added without pod slots", None, node(pods=0), SKIP),
    ("cpu grew and now fits", node(cpu="1"), node(cpu="4"), QUEUE),
    ("still too small after growing", node(cpu="1"), node(cpu="1500m"), SKIP),
    (
        "change unrelated to what the pod requests",
        node(cpu="4"),
        node(cpu="4", memory="16Gi"),
        SKIP,
    ),
    ("more pod slots", node(pods=5), node(pods=6), QUEUE),
]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [c[1:] for c in NODE_HINT_CASES],
    ids=[c[0] for c in NODE_HINT_CASES],
)
def test_node_event_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    assert after_node_change(TARGET, old, new) is want


def test_node_event_hint_for_extended_resources() -> None:
    pod = make_pod("p").req(**{GPU: 1}).obj()
    assert after_node_change(pod, node(), node(**{GPU: 1})) is QUEUE
    assert after_node_change(pod, node(**{GPU: 1}), node(**{GPU: 1}, cpu="8")) is SKIP


def test_reason_patterns_group_rows_for_any_number_of_checks() -> None:
    rng = np.random.default_rng(7)
    narrow = rng.random((40, 5)) < 0.3
    wide = np.hstack([narrow, np.zeros((40, 70), dtype=np.bool_)])  # too wide to pack
    for failed in (narrow, wide):
        patterns, inverse = _distinct_patterns(failed)
        assert len({tuple(p) for p in patterns}) == len(patterns)
        assert [patterns[i] for i in inverse] == failed.tolist()
