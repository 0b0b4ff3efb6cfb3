"""`explain` against a real kube-apiserver, beside the daemon that failed to place the pod.

Two nodes: one too full for the pod's CPU, one tainted. `explain` runs as its own process with
a user that may only get, list and watch; its per-node verdicts must count exactly what the
daemon's FailedScheduling Event counts, nothing in the cluster may change while it runs, and
its first suggested fix, applied to the pod, must let the daemon bind it. The daemon runs with
--plugin-result-annotation, whose record must agree with its Event too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.cluster.sim.merge import merge_patch
from scheduler.core.result_annotation import ANNOTATION
from tests.e2e.api_client import ApiClient
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import poll_until
from tests.e2e.read_only_user import grant_read_only
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

MERGE_PATCH = "application/merge-patch+json"
# Upper bounds for the daemon and the server, not synchronisation delays.
EVENT_TIMEOUT_S = 30.0
BIND_TIMEOUT_S = 30.0
RBAC_PROPAGATION_S = 30.0
EXPLAIN_TIMEOUT_S = 60.0


def _reader_kubeconfig(control_plane: ControlPlane, admin: ApiClient, work: Path) -> Path:
    """A user who may get, list and watch everything and write nothing."""
    user = f"explain-reader-{uuid.uuid4().hex[:6]}"
    grant_read_only(admin, user)
    pair = control_plane.certificate_authority.issue_client(user, [])
    cert, key = work / f"{user}.crt", work / f"{user}.key"
    pair.write(cert, key)
    reader = ApiClient(control_plane.server_url, control_plane.ca_path, client_cert=(cert, key))
    poll_until(
        lambda: reader.get("/api/v1/nodes").status == 200,
        "the reader's RBAC takes effect",
        timeout_s=RBAC_PROPAGATION_S,
    )
    denied = reader.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": user}})
    assert denied.status == 403, denied
    return control_plane.client_kubeconfig(user, [])


def _histogram(message: str) -> dict[str, int]:
    match = re.match(r"0/\d+ nodes are available: (.*?)\.(?: |$)", message)
    assert match, message
    return {
        reason: int(count)
        for count, _, reason in (e.partition(" ") for e in match.group(1).split(", "))
    }


def _cluster_versions(admin: ApiClient, workload: Workload) -> dict[str, Any]:
    """resourceVersions of the test's pods and nodes, and the namespace's Events."""
    nodes = {
        n: admin.get(f"/api/v1/nodes/{n}").body["metadata"]["resourceVersion"]
        for n in workload.nodes
    }
    pods = {n: p["metadata"]["resourceVersion"] for n, p in workload.pods().items()}
    events = sorted(
        (e["metadata"]["name"], e["metadata"]["resourceVersion"]) for e in workload.events()
    )
    return {"nodes": nodes, "pods": pods, "events": events}


def _explain(argv: list[str], environ: dict[str, str]) -> dict[str, Any]:
    """`explain` run as the operator runs it: its own process, JSON out."""
    ran = subprocess.run(
        [sys.executable, "-m", "scheduler.app.cli", *argv],
        capture_output=True,
        text=True,
        timeout=EXPLAIN_TIMEOUT_S,
        check=False,
        env=environ,
    )
    assert ran.returncode == 0, ran.stderr
    return dict(json.loads(ran.stdout))


def test_explain_agrees_with_the_daemon_writes_nothing_and_its_fix_schedules(
    control_plane: ControlPlane,
    admin: ApiClient,
    workload: Workload,
    daemons: DaemonLauncher,
    tmp_path: Path,
) -> None:
    scheduler = unique("explain")
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": scheduler}],
            }
        )
    )
    full, tainted = workload.create_node(cpu="2"), workload.create_node(cpu="4")
    taint = {"spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}
    patched = admin.request("PATCH", f"/api/v1/nodes/{tainted}", taint, content_type=MERGE_PATCH)
    assert patched.status == 200, patched
    workload.create_pod(workload.pod_manifest("filler", scheduler, cpu="1500m", node_name=full))
    flags = [f"--config={config}", "--plugin-result-annotation"]
    daemons.start(scheduler, extra_args=flags).wait_ready()
    manifest = workload.pod_manifest("web", scheduler, cpu="1")
    workload.create_pod(manifest)
    [event] = workload.wait_events("FailedScheduling", ["web"], timeout_s=EVENT_TIMEOUT_S)["web"]

    # The status patch and the annotation follow the Event; the pod is settled after both.
    def settled() -> dict[str, Any] | None:
        pod = workload.pods()["web"]
        conditions = (pod.get("status") or {}).get("conditions") or ()
        annotation = (pod["metadata"].get("annotations") or {}).get(ANNOTATION)
        unschedulable = any(c.get("reason") == "Unschedulable" for c in conditions)
        return json.loads(annotation) if unschedulable and annotation else None

    recorded = poll_until(settled, "the daemon records the failure", timeout_s=EVENT_TIMEOUT_S)
    assert recorded["message"] == event["note"]
    assert recorded["nodes"][full] == "NodeResourcesFit: Insufficient cpu"
    before = _cluster_versions(admin, workload)

    reader = _reader_kubeconfig(control_plane, admin, tmp_path)
    argv = ["explain", f"{workload.namespace}/web", f"--config={config}", "-o", "json"]
    explanation = _explain([*argv, f"--kubeconfig={reader}"], dict(os.environ))
    # Without --kubeconfig it reads $KUBECONFIG, as kubectl does, to the same answer.
    home = tmp_path / "home"
    home.mkdir()
    environ = {**os.environ, "KUBECONFIG": str(reader), "HOME": str(home)}
    environ.pop("KUBERNETES_SERVICE_HOST", None)
    assert _explain(argv, environ) == explanation

    assert _cluster_versions(admin, workload) == before, "explain changed the cluster"
    assert explanation["outcome"] == "Unschedulable"
    assert explanation["message"] == event["note"]
    # The daemon's own condition on the pod says the same.
    assert explanation["podScheduled"]["reason"] == "Unschedulable"
    assert explanation["podScheduled"]["message"] == event["note"]
    ours = {n["name"]: n for n in explanation["nodes"] if n["name"] in workload.nodes}
    counts: dict[str, int] = {}
    for node in explanation["nodes"]:
        for reason in node["verdict"]["reasons"] if not node["feasible"] else ():
            counts[reason] = counts.get(reason, 0) + 1
    assert counts == _histogram(event["note"])
    assert ours[full]["verdict"]["reasons"] == ["Insufficient cpu"]
    assert ours[tainted]["verdict"]["plugin"] == "TaintToleration"

    fix = explanation["fixes"][0]
    assert fix["summary"] == f"fits {full} if the cpu request is ≤ 500m"
    # Requests cannot change in place: the pod is made again with the fix applied.
    gone = admin.request(
        "DELETE", f"/api/v1/namespaces/{workload.namespace}/pods/web", {"gracePeriodSeconds": 0}
    )
    assert gone.status == 200, gone
    poll_until(lambda: "web" not in workload.pods(), "web deleted", timeout_s=BIND_TIMEOUT_S)
    workload.create_pod(merge_patch(manifest, fix["patch"]))
    placed = workload.wait_bound(["web"], timeout_s=BIND_TIMEOUT_S)
    assert placed["web"] in fix["nodes"]
