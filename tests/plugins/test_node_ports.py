"""NodePorts: host ports must be free on the node."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.node_ports import REASON
from plugins.node_ports import SPEC
from plugins.node_ports import NodePorts
from scheduler.framework import ActionType
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import ClusterEvent
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterPlugin
from scheduler.framework import Pod
from scheduler.framework import PreFilterPlugin
from scheduler.framework import QueueingHint
from scheduler.framework import Status
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node

PLUGIN = NodePorts(None, FakeHandle())
BUSY = Status.unschedulable(REASON)
OK = Status()


def test_spec() -> None:
    assert SPEC.name == NodePorts.name == "NodePorts"
    assert SPEC.extension_points == ["PreFilter", "Filter"]
    for protocol in (PreFilterPlugin, FilterPlugin, BatchFilterPlugin):
        assert isinstance(PLUGIN, protocol)
    assert PLUGIN.pre_filter_extensions() is None


def test_pre_filter_skips_pods_without_host_ports() -> None:
    table = build_table([])
    container_port_only = (
        make_pod("c")
        .spec(containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}])
        .obj()
    )
    for pod in (make_pod("none").obj(), container_port_only):
        result, status = PLUGIN.pre_filter(CycleState(), pod, table)
        assert result is None
        assert status.is_skip
    result, status = PLUGIN.pre_filter(CycleState(), make_pod("p").host_port(80).obj(), table)
    assert (result, status.code) == (None, Code.SUCCESS)


def on(node: str, name: str, *ports: tuple[int, str, str]) -> Pod:
    builder = make_pod(name).node(node)
    for port, protocol, ip in ports:
        builder.host_port(port, protocol, ip)
    return builder.obj()


EXISTING = [
    on("tcp80", "web", (80, "TCP", "")),
    on("udp53", "dns", (53, "UDP", "")),
    on("ip-bound", "bound", (8080, "TCP", "10.0.0.1")),
    # A plain init container's port 9 is free again once it has finished; a sidecar's port 10
    # is held as long as the pod runs.
    make_pod("init-port")
    .node("init")
    .spec(
        initContainers=[
            {"name": "i", "image": "i", "ports": [{"containerPort": 9, "hostPort": 9}]},
            {
                "name": "s",
                "image": "s",
                "restartPolicy": "Always",
                "ports": [{"containerPort": 10, "hostPort": 10}],
            },
        ]
    )
    .obj(),
]
NODE_NAMES = ["free", "tcp80", "udp53", "ip-bound", "init"]


@pytest.mark.parametrize(
    ("ports", "expected"),
    [
        ([(80, "TCP", "")], [OK, BUSY, OK, OK, OK]),
        ([(80, "UDP", "")], [OK, OK, OK, OK, OK]),
        ([(53, "UDP", "127.0.0.1")], [OK, OK, BUSY, OK, OK]),
        ([(8080, "TCP", "10.0.0.2")], [OK, OK, OK, OK, OK]),
        ([(8080, "TCP", "10.0.0.1")], [OK, OK, OK, BUSY, OK]),
        ([(8080, "TCP", "0.0.0.0")], [OK, OK, OK, BUSY, OK]),
        ([(9, "TCP", "")], [OK, OK, OK, OK, OK]),
        ([(10, "TCP", "")], [OK, OK, OK, OK, BUSY]),
        ([(81, "TCP", ""), (53, "UDP", "")], [OK, OK, BUSY, OK, OK]),
    ],
    ids=[
        "same-port-and-protocol",
        "other-protocol",
        "specific-ip-vs-wildcard",
        "different-specific-ips",
        "same-specific-ip",
        "wildcard-vs-specific-ip",
        "finished-init-container-port",
        "sidecar-port",
        "any-wanted-port-clashes",
    ],
)
def test_filter(ports: list[tuple[int, str, str]], expected: list[Status]) -> None:
    table = build_table([make_node(n).obj() for n in NODE_NAMES], EXISTING)
    pod = on("", "incoming", *ports)
    state = CycleState()
    PLUGIN.pre_filter(state, pod, table)
    assert filter_each_node(PLUGIN, state, pod, table) == expected
    assert filter_batch_as_statuses(PLUGIN, state, pod, table) == expected


def registrations() -> list[Any]:
    found = PLUGIN.events_to_register()
    assert [r.event for r in found] == [
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
        ClusterEvent(EventResource.NODE, ActionType.ADD),
    ]
    assert found[1].hint is None
    return found


@pytest.mark.parametrize(
    ("deleted", "expected"),
    [
        (on("n", "holder", (80, "TCP", "")), QueueingHint.QUEUE),
        (make_pod("nominated").host_port(80).nominated("n").obj(), QueueingHint.QUEUE),
        (make_pod("unscheduled").host_port(80).obj(), QueueingHint.QUEUE_SKIP),
        (on("n", "no-ports"), QueueingHint.QUEUE_SKIP),
        (on("n", "other-port", (81, "TCP", "")), QueueingHint.QUEUE_SKIP),
        (on("n", "other-protocol", (80, "UDP", "")), QueueingHint.QUEUE_SKIP),
        (on("n", "specific-ip", (80, "TCP", "10.1.1.1")), QueueingHint.QUEUE),
    ],
    ids=lambda v: v.name if isinstance(v, Pod) else None,
)
def test_pod_deleted_hint(deleted: Pod, expected: QueueingHint) -> None:
    hint = registrations()[0].hint
    pod = make_pod("wants-80").host_port(80).obj()
    assert hint(pod, deleted, None) is expected


# ---- batch and per-node forms agree ----------------------------------------------------

PORT = st.tuples(
    st.sampled_from([53, 80, 443]),
    st.sampled_from(["TCP", "UDP"]),
    st.sampled_from(["", "10.0.0.1", "10.0.0.2"]),
)


@settings(max_examples=80, deadline=None)
@given(
    used=st.lists(st.lists(PORT, max_size=3), min_size=1, max_size=6),
    wanted=st.lists(PORT, max_size=3),
    data=st.data(),
)
def test_batch_and_per_node_forms_agree(
    used: list[list[tuple[int, str, str]]], wanted: list[tuple[int, str, str]], data: st.DataObject
) -> None:
    nodes = [make_node(f"n{i}").obj() for i in range(len(used))]
    pods = [on(f"n{i}", f"p{i}", *ports) for i, ports in enumerate(used)]
    table = build_table(nodes, pods)
    pod = on("", "incoming", *wanted)
    state = CycleState()
    PLUGIN.pre_filter(state, pod, table)
    per_node = filter_each_node(PLUGIN, state, pod, table)
    assert filter_batch_as_statuses(PLUGIN, state, pod, table) == per_node
    rows = np.asarray(data.draw(st.permutations(range(table.size))), dtype=np.int64)
    assert filter_batch_as_statuses(PLUGIN, state, pod, table, rows) == [
        per_node[int(r)] for r in rows
    ]


def test_only_a_sidecar_init_container_wants_its_host_port() -> None:
    plain = {"name": "i", "image": "i", "ports": [{"containerPort": 9, "hostPort": 9}]}
    sidecar = {**plain, "name": "s", "restartPolicy": "Always"}
    assert make_pod("p").spec(initContainers=[plain]).obj().host_ports == ()
    assert [p.port for p in make_pod("p").spec(initContainers=[sidecar]).obj().host_ports] == [9]
