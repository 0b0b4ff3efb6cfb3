"""A pod's new version reuses the old parse only when nothing else it derives from changed."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from scheduler.objects.pod import Pod
from scheduler.objects.pod_changes import rebased


def _pending() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "uid": "u1",
            "resourceVersion": "10",
            "labels": {"app": "web"},
            "managedFields": [{"manager": "kubectl", "operation": "Update"}],
        },
        "spec": {
            "schedulerName": "default-scheduler",
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
            "tolerations": [{"key": "k", "operator": "Exists"}],
        },
        "status": {"phase": "Pending", "conditions": []},
    }


def _bound(raw: dict[str, Any]) -> dict[str, Any]:
    bound = copy.deepcopy(raw)
    bound["spec"]["nodeName"] = "n1"
    bound["metadata"]["resourceVersion"] = "11"
    bound["metadata"]["managedFields"].append({"manager": "kube-scheduler"})
    bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    return bound


def _fields(pod: Pod) -> dict[str, Any]:
    return {f.name: getattr(pod, f.name) for f in dataclasses.fields(pod)}


def test_a_binding_coming_back_gives_what_a_full_parse_gives() -> None:
    old = Pod.from_dict(_pending())
    new_raw = _bound(_pending())

    derived = rebased(old, new_raw)

    assert derived is not None
    assert derived.node_name == "n1" and derived.resource_version == "11"
    assert derived.raw is new_raw
    assert _fields(derived) == _fields(Pod.from_dict(new_raw))


def test_any_other_change_asks_for_a_full_parse() -> None:
    old = Pod.from_dict(_pending())
    changes = [
        ("metadata", "labels", {"app": "db"}),
        ("metadata", "deletionTimestamp", "2026-01-01T00:00:00Z"),
        ("spec", "priority", 10),
        ("spec", "tolerations", []),
        ("status", "phase", "Running"),
        ("status", "nominatedNodeName", "n2"),
    ]
    for section, key, value in changes:
        new_raw = _bound(_pending())
        new_raw[section][key] = value
        assert rebased(old, new_raw) is None, (section, key)
    no_status = _bound(_pending())
    del no_status["status"]
    assert rebased(old, no_status) is None
    # A field gone counts as much as one added or changed, even one that was null.
    for section, key in [("spec", "tolerations"), ("metadata", "labels")]:
        new_raw = _bound(_pending())
        del new_raw[section][key]
        assert rebased(old, new_raw) is None, (section, key)
    null_added = _bound(_pending())
    null_added["spec"]["priority"] = None
    assert rebased(old, null_added) is None


def test_a_malformed_new_status_is_left_to_the_full_parse_to_report() -> None:
    old = Pod.from_dict(_pending())
    new_raw = _bound(_pending())
    new_raw["status"]["conditions"] = "not a list"

    assert rebased(old, new_raw) is None
