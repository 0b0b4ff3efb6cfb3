"""Deriving ClusterEvents from object updates, and naming them."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.backend.queue import event_label
from scheduler.backend.queue import node_update_events
from scheduler.backend.queue import pod_update_events
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import EventResource
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.testing.builders import NodeBuilder
from scheduler.testing.builders import PodBuilder
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod

A = ActionType


def base_pod() -> PodBuilder:
    return make_pod("p").uid("u1").req(cpu="500m", memory="1Gi").label("app", "web")


POD_CASES: dict[str, tuple[PodBuilder, PodBuilder, list[ActionType]]] = {
    "label": (base_pod(), base_pod().label("tier", "1"), [A.UPDATE_POD_LABEL]),
    "toleration": (
        base_pod(),
        base_pod().toleration("k", "v", "NoSchedule"),
        [A.UPDATE_POD_TOLERATIONS],
    ),
    "gates-eliminated": (
        base_pod().scheduling_gate("a").scheduling_gate("b"),
        base_pod(),
        [A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED],
    ),
    "one-gate-left": (
        base_pod().scheduling_gate("a").scheduling_gate("b"),
        base_pod().scheduling_gate("b"),
        [A.UPDATE_OTHER],
    ),
    "scale-down": (
        base_pod(),
        make_pod("p").uid("u1").req(cpu="250m", memory="1Gi").label("app", "web"),
        [A.UPDATE_POD_SCALE_DOWN],
    ),
    "request-removed": (
        base_pod(),
        make_pod("p").uid("u1").req(cpu="500m").label("app", "web"),
        [A.UPDATE_POD_SCALE_DOWN],
    ),
    "scale-up": (
        base_pod(),
        make_pod("p").uid("u1").req(cpu="1", memory="1Gi").label("app", "web"),
        [A.UPDATE_OTHER],
    ),
    "annotation-only": (base_pod(), base_pod().annotation("a", "b"), [A.UPDATE_OTHER]),
    "label-and-toleration": (
        base_pod(),
        base_pod().label("tier", "1").toleration("k", "", "", "Exists"),
        [A.UPDATE_POD_LABEL, A.UPDATE_POD_TOLERATIONS],
    ),
}


@pytest.mark.parametrize(("old", "new", "actions"), POD_CASES.values(), ids=POD_CASES.keys())
def test_pod_update_events(old: PodBuilder, new: PodBuilder, actions: list[ActionType]) -> None:
    events = pod_update_events(old.obj(), new.obj())
    assert [e.action for e in events] == actions
    assert {e.resource for e in events} == {EventResource.UNSCHEDULED_POD}


def test_pod_update_event_resource_and_label_for_a_bound_pod() -> None:
    old = make_pod("p").node("n1").obj()
    (event,) = pod_update_events(old, make_pod("p").node("n1").label("a", "b").obj())
    assert event == ClusterEvent(
        EventResource.ASSIGNED_POD, A.UPDATE_POD_LABEL, "AssignedPodUpdatePodLabel"
    )


EXTENDED = {
    "resourceClaimName": "p-extended-resources-x",
    "requestMappings": [
        {"containerName": "c", "resourceName": "example.com/gpu", "requestName": "r"}
    ],
}


@pytest.mark.parametrize(
    ("before", "after", "changed"),
    [
        ({}, {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]}, True),
        # The claim made for the pod's extended resources is a generated claim too.
        ({}, {"extendedResourceClaimStatus": EXTENDED}, True),
        (
            {"extendedResourceClaimStatus": EXTENDED},
            {"extendedResourceClaimStatus": EXTENDED},
            False,
        ),
        # None and an empty list are alike, as upstream compares them by length.
        ({}, {"resourceClaimStatuses": []}, False),
    ],
    ids=["claim-status-added", "extended-claim-added", "extended-unchanged", "none-vs-empty"],
)
def test_generated_resource_claim_change(
    before: dict[str, Any], after: dict[str, Any], changed: bool
) -> None:
    old = base_pod().dict()
    new = base_pod().dict()
    old["status"].update(before)
    new["status"].update(after)
    (event,) = pod_update_events(Pod.from_dict(old), Pod.from_dict(new))
    expected = A.UPDATE_POD_GENERATED_RESOURCE_CLAIM if changed else A.UPDATE_OTHER
    assert event.action is expected


def with_conditions(builder: NodeBuilder, **statuses: Any) -> Node:
    raw = builder.dict()
    raw["status"]["conditions"] = [{"type": t, **s} for t, s in statuses.items()]
    return Node.from_dict(raw)


def annotated(builder: NodeBuilder, **annotations: str) -> Node:
    raw = builder.dict()
    raw["metadata"]["annotations"] = annotations
    return Node.from_dict(raw)


def with_taint_added(node: NodeBuilder, time_added: str) -> Node:
    raw = node.dict()
    raw["spec"]["taints"][0]["timeAdded"] = time_added
    return Node.from_dict(raw)


NODE_CASES: dict[str, tuple[Node, Node, list[ActionType]]] = {
    "allocatable": (
        make_node("n").obj(),
        make_node("n").allocatable(cpu="8").obj(),
        [A.UPDATE_NODE_ALLOCATABLE],
    ),
    "label": (make_node("n").obj(), make_node("n").label("zone", "a").obj(), [A.UPDATE_NODE_LABEL]),
    "taint": (make_node("n").obj(), make_node("n").taint("k", "v").obj(), [A.UPDATE_NODE_TAINT]),
    "taint-time-added": (
        with_taint_added(make_node("n").taint("k"), "2026-12-07T08:00:00Z"),
        with_taint_added(make_node("n").taint("k"), "2026-12-07T08:05:00Z"),
        [A.UPDATE_NODE_TAINT],
    ),
    "no-taints-to-empty-list": (
        make_node("n").obj(),
        Node.from_dict({**make_node("n").dict(), "spec": {"taints": []}}),
        [],
    ),
    "uncordoned": (
        make_node("n").unschedulable().obj(),
        make_node("n").obj(),
        [A.UPDATE_NODE_TAINT],
    ),
    "cordoned": (make_node("n").obj(), make_node("n").unschedulable().obj(), []),
    "condition-status": (
        with_conditions(make_node("n"), Ready={"status": "False"}),
        with_conditions(make_node("n"), Ready={"status": "True"}),
        [A.UPDATE_NODE_CONDITION],
    ),
    "heartbeat-only": (
        with_conditions(make_node("n"), Ready={"status": "True", "lastHeartbeatTime": "t1"}),
        with_conditions(make_node("n"), Ready={"status": "True", "lastHeartbeatTime": "t2"}),
        [],
    ),
    "annotation": (
        make_node("n").obj(),
        Node.from_dict(
            {
                **make_node("n").dict(),
                "metadata": {
                    "name": "n",
                    "labels": {"kubernetes.io/hostname": "n"},
                    "annotations": {"a": "b"},
                },
            }
        ),
        [A.UPDATE_NODE_ANNOTATION],
    ),
    "declared-features": (
        make_node("n").declared_features("A").obj(),
        make_node("n").declared_features("A", "B").obj(),
        [A.UPDATE_NODE_DECLARED_FEATURE],
    ),
    "same-declared-features": (
        make_node("n").declared_features("A").obj(),
        make_node("n").declared_features("A").obj(),
        [],
    ),
    "uncordoned-and-tainted": (
        make_node("n").unschedulable().obj(),
        make_node("n").taint("k").obj(),
        [A.UPDATE_NODE_TAINT, A.UPDATE_NODE_TAINT],
    ),
    "label-and-taint": (
        make_node("n").obj(),
        make_node("n").label("zone", "a").taint("k").obj(),
        [A.UPDATE_NODE_LABEL, A.UPDATE_NODE_TAINT],
    ),
}


@pytest.mark.parametrize(("old", "new", "actions"), NODE_CASES.values(), ids=NODE_CASES.keys())
def test_a_node_update_is_one_event_per_changed_aspect(
    old: Node, new: Node, actions: list[ActionType]
) -> None:
    events = node_update_events(old, new)
    assert all(event.resource is EventResource.NODE for event in events)
    assert [event.action for event in events] == actions


@pytest.mark.parametrize(
    ("event", "label"),
    [
        (NODE_ADD, "NodeAdd"),
        (ClusterEvent(EventResource.NODE, A.UPDATE_NODE_TAINT), "NodeUpdateNodeTaint"),
        (
            ClusterEvent(EventResource.NODE, A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT),
            "NodeUpdateNodeLabel|UpdateNodeTaint",
        ),
        (
            ClusterEvent(EventResource.NODE, A.UPDATE_NODE_DECLARED_FEATURE),
            "NodeUpdateNodeDeclaredFeature",
        ),
        (ClusterEvent(EventResource.PERSISTENT_VOLUME, A.ALL), "PersistentVolumeAll"),
        (ClusterEvent(EventResource.STORAGE_CLASS, A.ADD), "storage.k8s.io/StorageClassAdd"),
        (
            ClusterEvent(EventResource.RESOURCE_SLICE, A.UPDATE),
            "resource.k8s.io/ResourceSliceUpdate",
        ),
        (ClusterEvent(EventResource.WILDCARD, A.ALL, "ForceActivate"), "ForceActivate"),
    ],
)
def test_event_labels(event: ClusterEvent, label: str) -> None:
    assert event_label(event) == label
