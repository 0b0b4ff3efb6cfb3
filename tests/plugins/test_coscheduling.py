"""Coscheduling's args, PodGroup parsing of every dialect, and its hints, without a cluster."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from plugins.coscheduling import CoschedulingArgs
from plugins.coscheduling.dialects import NATIVE_RESOURCE
from plugins.coscheduling.dialects import SIGS_RESOURCE
from plugins.coscheduling.dialects import X_K8S_RESOURCE
from plugins.coscheduling.dialects import GroupRef
from plugins.coscheduling.dialects import group_of_raw
from plugins.coscheduling.hints import after_group_changed
from plugins.coscheduling.hints import after_member_changed
from plugins.coscheduling.pod_group import parse_pod_group
from scheduler.framework import QueueingHint
from scheduler.objects.errors import InvalidObjectError
from scheduler.testing import make_pod


def test_args_defaults_are_upstreams() -> None:
    args = CoschedulingArgs()
    assert (
        args.permit_waiting_time_seconds,
        args.pod_group_backoff_seconds,
        args.pod_group_reject_percentage,
    ) == (60, 0, 10)


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        ({"permitWaitingTimeSeconds": 0}, "permitWaitingTimeSeconds", "must be greater than 0"),
        ({"podGroupBackoffSeconds": -1}, "podGroupBackoffSeconds", "must not be negative"),
        ({"podGroupRejectPercentage": 101}, "podGroupRejectPercentage", "[0, 100]"),
    ],
)
def test_args_errors_name_the_field(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        CoschedulingArgs.model_validate(raw)
    [error] = caught.value.errors()
    assert error["loc"] == (field,)
    assert message in error["msg"]


def test_every_dialect_names_its_group() -> None:
    x_k8s = make_pod("a").label("scheduling.x-k8s.io/pod-group", "g").dict()
    sigs = make_pod("b").label("pod-group.scheduling.sigs.k8s.io", "g").dict()
    native = make_pod("c").spec(schedulingGroup={"podGroupName": "g"}).dict()
    assert group_of_raw(x_k8s) == GroupRef(X_K8S_RESOURCE, "default", "g")
    assert group_of_raw(sigs) == GroupRef(SIGS_RESOURCE, "default", "g")
    assert group_of_raw(native) == GroupRef(NATIVE_RESOURCE, "default", "g")
    assert group_of_raw(make_pod("d").dict()) is None


def test_pod_group_fields_and_errors() -> None:
    ref = GroupRef(X_K8S_RESOURCE, "ns", "g")
    raw = {
        "metadata": {"name": "g", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"minMember": 3, "minResources": {"cpu": "2"}, "scheduleTimeoutSeconds": 5},
    }
    group = parse_pod_group(ref, raw)
    assert (group.min_member, dict(group.min_resources), group.schedule_timeout_seconds) == (
        3,
        {"cpu": 2000},
        5.0,
    )
    with pytest.raises(InvalidObjectError, match=r"PodGroup ns/g: spec.minMember: must be"):
        parse_pod_group(ref, {"spec": {"minMember": 0}})
    # A timeout of 0 leaves the wait to the plugin's argument, as scheduler-plugins reads it.
    unset = parse_pod_group(ref, {"spec": {"minMember": 2, "scheduleTimeoutSeconds": 0}})
    assert unset.schedule_timeout_seconds is None
    native = GroupRef(NATIVE_RESOURCE, "ns", "g")
    assert not parse_pod_group(native, {"spec": {"schedulingPolicy": {"basic": {}}}}).gang
    assert (
        parse_pod_group(
            native, {"spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}}
        ).min_member
        == 4
    )


def test_hints_are_about_the_pods_own_group() -> None:
    pod = make_pod("a").label("scheduling.x-k8s.io/pod-group", "g").obj()
    sibling = make_pod("b").label("scheduling.x-k8s.io/pod-group", "g").obj()
    stranger = make_pod("c").label("scheduling.x-k8s.io/pod-group", "h").obj()
    assert after_member_changed(pod, None, sibling) is QueueingHint.QUEUE
    assert after_member_changed(pod, None, stranger) is QueueingHint.QUEUE_SKIP
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"minMember": 2},
    }
    assert after_group_changed(pod, None, group) is QueueingHint.QUEUE
    # A status write is no news to the members.
    with_status = {**group, "status": {"phase": "Pending"}}
    assert after_group_changed(pod, group, with_status) is QueueingHint.QUEUE_SKIP
    other = {**group, "metadata": {"name": "h", "namespace": "default"}}
    assert after_group_changed(pod, None, other) is QueueingHint.QUEUE_SKIP
