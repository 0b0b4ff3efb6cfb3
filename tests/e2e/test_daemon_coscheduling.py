"""Gang scheduling against a real kube-apiserver with the PodGroup CRD installed.

A PodGroup of minMember 5 and its pods (scheduler-plugins' label): while only four exist none
is bound, each says why, the PodGroup stays Pending and an Event about it says why; the fifth
arrival gets all five bound, and the group's status moves to Scheduling.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduler.testing import make_pod
from tests.e2e.api_client import ApiClient
from tests.e2e.custom_resources import install_crds
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import poll_until
from tests.e2e.workload import Object
from tests.e2e.workload import Workload
from tests.e2e.workload import pod_scheduled_condition
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "examples" / "gang-scheduling-config.yaml"
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups"
# Upper bounds for waiting on the daemon and the server, not synchronisation delays.
BIND_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 30.0
STATUS_TIMEOUT_S = 30.0


def _member(workload: Workload, scheduler: str, name: str, group: str) -> Object:
    builder = make_pod(name, workload.namespace).scheduler(scheduler).req(cpu="1")
    manifest: dict[str, Any] = builder.label(GROUP_LABEL, group).dict()
    manifest["spec"]["nodeSelector"] = dict(workload.node_selector)
    manifest["metadata"].pop("uid")
    return workload.create_pod(manifest)


def _group_status(admin: ApiClient, namespace: str, name: str) -> dict[str, Any]:
    body = admin.get(f"{PODGROUPS.format(namespace=namespace)}/{name}").body
    return dict(body.get("status") or {})


def test_gang_of_five_binds_only_when_all_five_exist(
    admin: ApiClient, daemons: DaemonLauncher, workload: Workload
) -> None:
    install_crds(admin)
    ours = unique("gang")
    workload.create_nodes(2, cpu="4")
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "train"},
        "spec": {"minMember": 5, "scheduleTimeoutSeconds": 30},
    }
    created = admin.post(PODGROUPS.format(namespace=workload.namespace), group)
    assert created.status == 201, created
    daemon = daemons.start(ours, extra_args=[f"--config={CONFIG}"])
    daemon.wait_ready()

    first = [f"train-{i}" for i in range(4)]
    for name in first:
        _member(workload, ours, name, "train")
    workload.wait_events("FailedScheduling", first, timeout_s=EVENT_TIMEOUT_S)
    # A member tried while fewer had been created says so ("current pods number: 3"); each new
    # member sends the others back to be tried again, so every condition comes to count all four.
    counted = "cannot find enough sibling pods, current pods number: 4, minMember of group: 5"

    def all_count_four() -> dict[str, Object] | None:
        pods = workload.pods()
        for name in first:
            condition = pod_scheduled_condition(pods[name])
            if condition is None or counted not in condition["message"]:
                return None
        return pods

    pods = poll_until(all_count_four, "every member counting 4 of 5", timeout_s=STATUS_TIMEOUT_S)
    assert not any(p["spec"].get("nodeName") for p in pods.values())
    poll_until(
        lambda: _group_status(admin, workload.namespace, "train").get("phase") == "Pending",
        "PodGroup Pending",
        timeout_s=STATUS_TIMEOUT_S,
    )
    # The PodGroup itself says why (its status has no field for a reason): an Event about it.
    [said] = poll_until(
        lambda: [
            e
            for e in workload.events("WaitingForMembers")
            if e["regarding"]["kind"] == "PodGroup" and e["regarding"]["name"] == "train"
        ],
        "an Event about the PodGroup",
        timeout_s=EVENT_TIMEOUT_S,
    )
    assert said["type"] == "Warning"
    assert said["note"] == (
        "fewer pods of the group exist than its minMember (5); none of them is scheduled "
        "until 5 exist"
    ), said

    _member(workload, ours, "train-4", "train")
    placed = workload.wait_bound([*first, "train-4"], timeout_s=BIND_TIMEOUT_S)
    assert len(placed) == 5
    status = poll_until(
        lambda: (
            (s := _group_status(admin, workload.namespace, "train")).get("phase") == "Scheduling"
            and s
        ),
        "PodGroup Scheduling",
        timeout_s=STATUS_TIMEOUT_S,
    )
    assert status["scheduleStartTime"]
    # Bound together: no member was bound before the last one was created, and none waited
    # out the group's timeout (a timeout would have left a FailedScheduling event).
    timeouts = [e for e in workload.events("FailedScheduling") if "timeout" in str(e.get("note"))]
    assert timeouts == []
