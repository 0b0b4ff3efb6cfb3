"""Kubernetes v1.36's own gang API (`scheduling.k8s.io/v1alpha2` PodGroup, pods linked by
`spec.schedulingGroup.podGroupName`) on a kube-apiserver started with its alpha gate.

The pinned apiserver serves it with `--runtime-config=scheduling.k8s.io/v1alpha2=true` and
`--feature-gates=GenericWorkload=true`, so this test runs its own control plane with those.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scheduler.testing import make_pod
from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.workload import Workload
from tests.e2e.workload import pod_scheduled_condition
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "examples" / "gang-scheduling-config.yaml"
ALPHA_FLAGS = (
    "--runtime-config=scheduling.k8s.io/v1alpha2=true",
    "--feature-gates=GenericWorkload=true",
)
PODGROUPS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/{namespace}/podgroups"
BIND_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def native_plane(e2e_binaries: ControlPlaneBinaries) -> Iterator[ControlPlane]:
    with ControlPlane(e2e_binaries, ALPHA_FLAGS) as plane:
        yield plane


def _member(workload: Workload, scheduler: str, name: str) -> None:
    builder = make_pod(name, workload.namespace).scheduler(scheduler).req(cpu="1")
    manifest: dict[str, Any] = builder.spec(schedulingGroup={"podGroupName": "native"}).dict()
    manifest["spec"]["nodeSelector"] = dict(workload.node_selector)
    manifest["metadata"].pop("uid")
    created = workload.create_pod(manifest)
    # The server keeps the link only with the gate on; without it this test would prove nothing.
    assert created["spec"]["schedulingGroup"] == {"podGroupName": "native"}


def test_native_gang_binds_only_with_its_quorum(native_plane: ControlPlane, tmp_path: Path) -> None:
    admin: ApiClient = native_plane.admin_client()
    namespace = f"e2e-{uuid.uuid4().hex[:10]}"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    assert admin.post("/api/v1/namespaces", body).status == 201
    workload = Workload(admin, namespace)
    launcher = DaemonLauncher(native_plane.kubeconfig_path, tmp_path / "daemons")
    try:
        workload.create_nodes(1, cpu="4")
        group = {
            "apiVersion": "scheduling.k8s.io/v1alpha2",
            "kind": "PodGroup",
            "metadata": {"name": "native"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
        }
        assert admin.post(PODGROUPS.format(namespace=namespace), group).status == 201
        ours = unique("native")
        daemon = launcher.start(ours, extra_args=[f"--config={CONFIG}"])
        daemon.wait_ready()
        for name in ("w-0", "w-1"):
            _member(workload, ours, name)
        workload.wait_events("FailedScheduling", ["w-0", "w-1"], timeout_s=EVENT_TIMEOUT_S)
        pods = workload.pods()
        assert not any(p["spec"].get("nodeName") for p in pods.values())
        condition = pod_scheduled_condition(pods["w-0"])
        assert condition is not None
        assert (
            "pre-filter pod w-0 cannot find enough sibling pods, current pods number: 2, "
            "minMember of group: 3" in condition["message"]
        )
        _member(workload, ours, "w-2")
        placed = workload.wait_bound(["w-0", "w-1", "w-2"], timeout_s=BIND_TIMEOUT_S)
        assert len(placed) == 3
    finally:
        launcher.stop_all()
        workload.delete_nodes()
