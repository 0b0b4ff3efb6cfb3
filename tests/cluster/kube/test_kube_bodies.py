"""Shapes of the request bodies the adapter sends."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import pytest

from scheduler.cluster.kube.bodies import binding
from scheduler.cluster.kube.bodies import delete_options
from scheduler.cluster.kube.bodies import event_body
from scheduler.cluster.kube.bodies import namespace_of
from scheduler.cluster.kube.bodies import status_patch
from scheduler.cluster.kube.bodies import typed
from scheduler.cluster.kube.resources import ResourceTable

TABLE = ResourceTable()
CONDITION = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ({"conditions": [CONDITION]}, {"status": {"conditions": [CONDITION]}}),
        ({"status": {"conditions": [CONDITION]}}, {"status": {"conditions": [CONDITION]}}),
        ({"nominatedNodeName": None}, {"status": {"nominatedNodeName": None}}),
        ({"status": {"nominatedNodeName": "n1"}}, {"status": {"nominatedNodeName": "n1"}}),
        # "status" beside other fields is a field of the status stanza, not a wrapper.
        (
            {"status": {"x": 1}, "phase": "Failed"},
            {"status": {"status": {"x": 1}, "phase": "Failed"}},
        ),
        # A status field called "status" that is not a mapping is just a field.
        ({"status": "odd"}, {"status": {"status": "odd"}}),
    ],
    ids=["fields", "wrapped", "removal", "wrapped-nominated", "mixed", "scalar-status"],
)
def test_status_patch_accepts_both_shapes(patch: dict[str, Any], expected: dict[str, Any]) -> None:
    assert status_patch(patch) == expected


def test_binding_names_the_pod_its_uid_and_the_node() -> None:
    assert binding("team-a", "web", "uid-1", "n1") == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web", "namespace": "team-a", "uid": "uid-1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }


def test_binding_without_a_uid_has_no_precondition() -> None:
    assert "uid" not in binding("a", "web", "", "n1")["metadata"]


@pytest.mark.parametrize(
    ("uid", "grace", "expected"),
    [
        ("", None, {}),
        ("u1", None, {"preconditions": {"uid": "u1"}}),
        ("u1", 0, {"preconditions": {"uid": "u1"}, "gracePeriodSeconds": 0}),
        ("", 30, {"gracePeriodSeconds": 30}),
    ],
    ids=["plain", "uid", "uid-grace-0", "grace-only"],
)
def test_delete_options(uid: str, grace: int | None, expected: dict[str, Any]) -> None:
    assert delete_options(uid, grace) == {"apiVersion": "v1", "kind": "DeleteOptions", **expected}


def test_typed_fills_missing_type_fields_without_touching_the_input() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "s"}}
    body = typed(TABLE["leases"], obj)
    assert body["apiVersion"] == "coordination.k8s.io/v1"
    assert body["kind"] == "Lease"
    assert obj == {"metadata": {"name": "s"}}
    assert typed(TABLE["pods"], {"apiVersion": "v1", "kind": "Pod"})["kind"] == "Pod"


@pytest.mark.parametrize(
    ("resource", "obj", "expected"),
    [
        ("pods", {"metadata": {"name": "a", "namespace": "x"}}, "x"),
        ("pods", {"metadata": {"name": "a"}}, "default"),
        ("nodes", {"metadata": {"name": "n", "namespace": "x"}}, ""),
    ],
    ids=["own", "default", "cluster-scoped"],
)
def test_namespace_of(resource: str, obj: dict[str, Any], expected: str) -> None:
    assert namespace_of(TABLE[resource], obj) == expected


NOW = datetime(2026, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)
# 2026-01-01T00:00:00.123456Z in nanoseconds since the epoch.
NOW_NANOS = 1_767_225_600_123_456_000


def test_event_body_lives_with_the_object_it_regards_and_is_named_after_it() -> None:
    event = {"regarding": {"kind": "Pod", "namespace": "team-a", "name": "web"}, "reason": "x"}
    body = event_body(event, NOW)
    assert body["apiVersion"] == "events.k8s.io/v1"
    assert body["kind"] == "Event"
    assert body["metadata"] == {"namespace": "team-a", "name": f"web.{NOW_NANOS:x}"}
    assert "metadata" not in event


def test_event_names_differ_by_the_microsecond() -> None:
    event = {"regarding": {"kind": "Pod", "namespace": "a", "name": "web"}}
    later = event_body(event, NOW + timedelta(microseconds=1))["metadata"]["name"]
    assert later == f"web.{NOW_NANOS + 1000:x}"


@pytest.mark.parametrize(
    "metadata",
    [{"name": "e1", "namespace": "ops"}, {"generateName": "e-", "namespace": "ops"}],
    ids=["name", "generate-name"],
)
def test_event_body_keeps_an_explicit_name_and_namespace(metadata: dict[str, str]) -> None:
    body = event_body({"metadata": metadata, "regarding": {"name": "web"}}, NOW)
    assert body["metadata"] == metadata


def test_event_body_regarding_a_cluster_scoped_object_goes_to_default() -> None:
    body = event_body({"regarding": {"kind": "Node", "name": "n1"}}, NOW)
    assert body["metadata"] == {"namespace": "default", "name": f"n1.{NOW_NANOS:x}"}
