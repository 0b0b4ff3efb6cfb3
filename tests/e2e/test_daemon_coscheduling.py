"""Gang scheduling against a real kube-apiserver with the PodGroup CRD installed.

A PodGroup of minMember 5 and its pods (scheduler-plugins' label): while only four exist none
is bound, each says why, the PodGroup stays Pending and an Event about it says why; the fifth
arrival gets all five bound, and the group's status moves to Scheduling.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.testing import make_pod
from tests.e2e.api_client import ApiClient
from tests.e2e.controlplane import ControlPlane
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
EXPLAIN_TIMEOUT_S = 60.0


def _member(workload: Workload, scheduler: str, name: str, group: str, **selector: str) -> Object:
    builder = make_pod(name, workload.namespace).scheduler(scheduler).req(cpu="1")
    manifest: dict[str, Any] = builder.label(GROUP_LABEL, group).dict()
    manifest["spec"]["nodeSelector"] = {**workload.node_selector, **selector}
    manifest["metadata"].pop("uid")
    return workload.create_pod(manifest)


def _gang_daemon(
    admin: ApiClient, daemons: DaemonLauncher, workload: Workload, group: str, min_member: int
) -> str:
    """Two nodes of 4 CPUs, PodGroup `group` of `min_member`, and a ready daemon running the
    gang configuration; its schedulerName."""
    install_crds(admin)
    workload.create_nodes(2, cpu="4")
    manifest = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": group},
        "spec": {"minMember": min_member, "scheduleTimeoutSeconds": 30},
    }
    created = admin.post(PODGROUPS.format(namespace=workload.namespace), manifest)
    assert created.status == 201, created
    ours = unique("gang")
    daemons.start(ours, extra_args=[f"--config={CONFIG}"]).wait_ready()
    return ours


def _group_status(admin: ApiClient, namespace: str, name: str) -> dict[str, Any]:
    body = admin.get(f"{PODGROUPS.format(namespace=namespace)}/{name}").body
    return dict(body.get("status") or {})


def test_gang_of_five_binds_only_when_all_five_exist(
    admin: ApiClient, daemons: DaemonLauncher, workload: Workload
) -> None:
    ours = _gang_daemon(admin, daemons, workload, "train", 5)

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


def test_explain_names_the_member_that_holds_a_gang_back(
    admin: ApiClient,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    workload: Workload,
    tmp_path: Path,
) -> None:
    """Each member but one fits. explain, run as an operator runs it against the daemon's
    cluster, reports a member Unschedulable (not Schedulable, though every Filter passes) and
    names the one that fits nowhere, in the daemon's own words for it. (The member's own text
    is a fresh scheduler's: the daemon remembers the group's last failure and so waits out the
    Permit timeout instead, which explain, reading only the cluster, cannot know.)"""
    ours = _gang_daemon(admin, daemons, workload, "held", 3)
    for name in ("held-0", "held-1"):
        _member(workload, ours, name, "held")
    _member(workload, ours, "held-2", "held", accelerator="none-here")

    def culprit() -> str | None:
        condition = pod_scheduled_condition(workload.pods()["held-2"])
        message = str(condition["message"]) if condition is not None else ""
        return message if "gets rejected due to Pod held-2" in message else None

    said = poll_until(
        culprit, "the daemon rejecting the group for held-2", timeout_s=EVENT_TIMEOUT_S
    )
    config = yaml.safe_load(CONFIG.read_text())
    config["profiles"][0]["schedulerName"] = ours
    config["leaderElection"] = {"leaderElect": False}
    explain_config = tmp_path / "explain-config.yaml"
    explain_config.write_text(yaml.safe_dump(config))
    kubeconfig = control_plane.client_kubeconfig(unique("operator"), ["system:masters"])
    argv = [f"{workload.namespace}/held-0", f"--kubeconfig={kubeconfig}"]
    argv += [f"--config={explain_config}", "-o", "json"]
    ran = subprocess.run(
        [sys.executable, "-m", "scheduler.app.cli", "explain", *argv],
        capture_output=True,
        text=True,
        timeout=EXPLAIN_TIMEOUT_S,
        check=False,
        env=dict(os.environ),
    )
    assert ran.returncode == 0, ran.stderr
    explanation = json.loads(ran.stdout)
    assert all(n["feasible"] for n in explanation["nodes"] if n["name"] in workload.nodes)
    assert explanation["outcome"] == "Unschedulable"
    assert (
        explanation["message"] == "0/1 nodes are available: 1 optimistic rejection in PostFilter."
    )
    companions = {c["pod"]: c for c in explanation["permit"]["companions"]}
    blocker = companions[f"{workload.namespace}/held-2"]
    assert (blocker["outcome"], blocker["message"]) == ("Unschedulable", said)
    assert not any(p["spec"].get("nodeName") for p in workload.pods().values())
