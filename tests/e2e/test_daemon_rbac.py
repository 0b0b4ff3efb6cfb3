"""The daemon with exactly the rights deploy/ grants it: enough to schedule, nothing more.

The RBAC objects and the ServiceAccount of deploy/ are applied to the test apiserver (which
authorizes with Node,RBAC), a token of that ServiceAccount is issued through the TokenRequest
API, and the daemon runs with the configuration of deploy/configmap.yaml and that token alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.manifests import DEPLOY_DIR
from tests.e2e.controlplane import ControlPlane
from tests.e2e.custom_resources import install_crds
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import LeaderElection
from tests.e2e.daemon import poll_until
from tests.e2e.lease_history import LEASES
from tests.e2e.manifests import apply
from tests.e2e.manifests import read_manifests
from tests.e2e.workload import Workload
from tests.e2e.workload import pod_scheduled_condition
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

RBAC_FILES = (
    "serviceaccount.yaml",
    "clusterrole.yaml",
    "clusterrolebinding.yaml",
    "role-leader-election.yaml",
    "rolebinding-leader-election.yaml",
    "rolebinding-authentication-reader.yaml",
)
# RBAC changes reach the authorizer through its informers, a moment after the write.
RBAC_PROPAGATION_S = 30.0
BIND_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Deployed:
    """What deploy/ sets up: the ServiceAccount's token and the scheduler's configuration."""

    token: str
    kubeconfig: Path
    config: dict[str, Any]
    config_path: Path


def _service_account() -> tuple[str, str]:
    [account] = read_manifests(DEPLOY_DIR / "serviceaccount.yaml")
    return account["metadata"]["namespace"], account["metadata"]["name"]


def apply_deployed_rbac(control_plane: ControlPlane) -> str:
    """Applies the RBAC objects and ServiceAccount of deploy/; returns a token of the latter."""
    admin = control_plane.admin_client()
    for name in RBAC_FILES:
        for manifest in read_manifests(DEPLOY_DIR / name):
            applied = apply(admin, manifest)
            assert applied.status in (200, 201), (name, applied)
    namespace, account = _service_account()
    return control_plane.service_account_token(namespace, account)


@pytest.fixture(scope="module")
def deployed(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployed]:
    token = apply_deployed_rbac(control_plane)
    kubeconfig = control_plane.make_user_kubeconfig(token, user=f"deployed-{uuid.uuid4().hex[:6]}")
    [config_map] = read_manifests(DEPLOY_DIR / "configmap.yaml")
    config_path = tmp_path_factory.mktemp("deployed") / "config.yaml"
    config_path.write_text(config_map["data"]["config.yaml"])
    client = control_plane.token_client(token)
    poll_until(
        lambda: client.get("/api/v1/pods?limit=1").status == 200,
        "the ServiceAccount's rights taking effect",
        timeout_s=RBAC_PROPAGATION_S,
    )
    yield Deployed(
        token, kubeconfig, yaml.safe_load(config_map["data"]["config.yaml"]), config_path
    )


def test_daemon_schedules_with_the_deployed_rbac_only(
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    workload: Workload,
    deployed: Deployed,
) -> None:
    ours = unique("sched")
    lease = deployed.config["leaderElection"]
    election = LeaderElection(lease["resourceNamespace"], lease["resourceName"])
    workload.create_nodes(2)
    daemon = daemons.start(
        ours,
        kubeconfig=deployed.kubeconfig,
        leader_election=election,
        extra_args=[f"--config={deployed.config_path}"],
    )
    pods = workload.create_pods([f"p{i}" for i in range(10)], ours)
    [too_big] = workload.create_pods(["too-big"], ours, cpu="64")

    placed = workload.wait_bound(pods, timeout_s=BIND_TIMEOUT_S)
    scheduled = workload.wait_events("Scheduled", pods, timeout_s=EVENT_TIMEOUT_S)
    failed = workload.wait_events("FailedScheduling", [too_big], timeout_s=EVENT_TIMEOUT_S)

    def rejected() -> bool:
        condition = pod_scheduled_condition(workload.pods()[too_big]) or {}
        return condition.get("reason") == "Unschedulable"

    poll_until(rejected, "PodScheduled=False on the pod too big", timeout_s=EVENT_TIMEOUT_S)
    assert all(placed.values())
    assert {e[0]["reportingController"] for e in scheduled.values()} == {ours}
    assert failed[too_big][0]["note"].startswith("0/")
    # It holds the Lease deploy/ names, as the ServiceAccount it runs as.
    held = control_plane.admin_client().get(
        f"{LEASES.format(namespace=election.namespace)}/{election.name}"
    )
    [acquired] = daemon.records("Successfully acquired lease")
    assert held.body["spec"]["holderIdentity"] == acquired["identity"]
    # Nothing it tried was refused.
    refused = [r for r in daemon.log_records() if "forbidden" in str(r).lower()]
    assert refused == []


GANG_CONFIG = DEPLOY_DIR / "examples" / "gang-scheduling-config.yaml"
PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups"


def test_gang_scheduling_and_podgroup_status_need_nothing_beyond_the_deployed_rbac(
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    workload: Workload,
    deployed: Deployed,
) -> None:
    admin = control_plane.admin_client()
    install_crds(admin)
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "pair"},
        "spec": {"minMember": 2},
    }
    assert admin.post(PODGROUPS.format(namespace=workload.namespace), group).status == 201
    ours = unique("gang")
    workload.create_nodes(1)
    daemon = daemons.start(
        ours, kubeconfig=deployed.kubeconfig, extra_args=[f"--config={GANG_CONFIG}"]
    )
    names = ["m0", "m1"]
    for name in names:
        manifest = workload.pod_manifest(name, ours)
        manifest["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "pair"}
        workload.create_pod(manifest)
    placed = workload.wait_bound(names, timeout_s=BIND_TIMEOUT_S)
    assert all(placed.values())

    def phase() -> str | None:
        body = admin.get(f"{PODGROUPS.format(namespace=workload.namespace)}/pair").body
        return (body.get("status") or {}).get("phase")

    # The status write goes through the podgroups/status grant.
    poll_until(lambda: phase() == "Scheduling", "PodGroup status", timeout_s=EVENT_TIMEOUT_S)
    refused = [r for r in daemon.log_records() if "forbidden" in str(r).lower()]
    assert refused == []


DENIED = [
    pytest.param("GET", "/api/v1/namespaces/kube-system/secrets", None, id="list-secrets"),
    pytest.param("GET", "/api/v1/configmaps", None, id="list-configmaps"),
    pytest.param(
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "intruder"},
            "spec": {
                "selector": {"matchLabels": {"app": "intruder"}},
                "template": {
                    "metadata": {"labels": {"app": "intruder"}},
                    "spec": {"containers": [{"name": "c", "image": "pause"}]},
                },
            },
        },
        id="create-deployment",
    ),
    pytest.param(
        "POST",
        "/api/v1/namespaces/default/events",
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "core-event"},
            "involvedObject": {"kind": "Pod", "name": "x", "namespace": "default"},
        },
        id="create-core-event",
    ),
    pytest.param("DELETE", "/api/v1/nodes/any-node", None, id="delete-node"),
    pytest.param(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler",
        None,
        id="another-lease",
    ),
]


@pytest.mark.parametrize(("method", "path", "body"), DENIED)
def test_the_deployed_token_is_refused_outside_its_rbac(
    control_plane: ControlPlane,
    deployed: Deployed,
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    answer = control_plane.token_client(deployed.token).request(method, path, body)

    # 403, not 401 or 404: the token is valid and only authorization refused.
    assert answer.status == 403, answer
    namespace, account = _service_account()
    assert f"system:serviceaccount:{namespace}:{account}" in answer.body["message"]
