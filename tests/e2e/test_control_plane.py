"""Smoke tests of the real control plane: the facts the scheduler's e2e tests build on."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.e2e.api_client import ApiClient
from tests.e2e.api_client import ApiResponse
from tests.e2e.binaries import read_pinned_versions
from tests.e2e.controlplane import ControlPlane

pytestmark = pytest.mark.e2e

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
# A scheduler name nobody serves, so only the test itself binds the pod.
UNSERVED_SCHEDULER = "e2e-nobody"
# RBAC changes reach the authorizer through an informer, a moment after the write.
RBAC_PROPAGATION_S = 15.0


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _without_uid(obj: dict[str, Any]) -> dict[str, Any]:
    """Builder objects carry a made-up uid; the server assigns its own."""
    obj["metadata"].pop("uid", None)
    return obj


def _created(response: ApiResponse) -> dict[str, Any]:
    assert response.status == 201, response
    body: dict[str, Any] = response.body
    return body


def _poll(check: Callable[[], ApiResponse], until: Callable[[ApiResponse], bool]) -> ApiResponse:
    deadline = time.monotonic() + RBAC_PROPAGATION_S
    response = check()
    while not until(response) and time.monotonic() < deadline:
        time.sleep(0.2)
        response = check()
    return response


def test_apiserver_is_ready_and_runs_the_pinned_version(admin: ApiClient) -> None:
    ready = admin.get("/readyz")
    version = admin.get("/version")

    assert (ready.status, ready.body) == (200, "ok")
    assert version.body["gitVersion"] == read_pinned_versions().kubernetes


def test_system_namespaces_exist_without_controller_manager(admin: ApiClient) -> None:
    listed = admin.get("/api/v1/namespaces")

    names = {item["metadata"]["name"] for item in listed.body["items"]}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names


def test_created_node_keeps_status_and_gets_no_not_ready_taint(admin: ApiClient) -> None:
    name = _unique("node")
    sent = make_node(name).capacity(cpu="8", memory="16Gi", pods=50).allocatable(cpu="7500m")

    _created(admin.post("/api/v1/nodes", _without_uid(sent.dict())))
    stored = admin.get(f"/api/v1/nodes/{name}").body

    assert stored["status"]["allocatable"] == {"cpu": "7500m", "memory": "16Gi", "pods": "50"}
    assert stored["status"]["capacity"] == {"cpu": "8", "memory": "16Gi", "pods": "50"}
    assert NOT_READY_TAINT not in {t["key"] for t in stored["spec"].get("taints", [])}


def test_pod_is_bound_through_the_binding_subresource(admin: ApiClient, namespace: str) -> None:
    node = _unique("node")
    _created(admin.post("/api/v1/nodes", _without_uid(make_node(node).dict())))
    pod = make_pod("web", namespace).scheduler(UNSERVED_SCHEDULER).req(cpu="100m").dict()
    _created(admin.post(f"/api/v1/namespaces/{namespace}/pods", _without_uid(pod)))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }

    bound = admin.post(f"/api/v1/namespaces/{namespace}/pods/web/binding", binding)
    rebound = admin.post(f"/api/v1/namespaces/{namespace}/pods/web/binding", binding)
    stored = admin.get(f"/api/v1/namespaces/{namespace}/pods/web").body

    # The server answers a Binding with a Status, not with the Binding.
    assert (bound.status, bound.body["kind"]) == (201, "Status")
    assert stored["spec"]["nodeName"] == node
    scheduled = [c for c in stored["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert [c["status"] for c in scheduled] == ["True"]
    assert rebound.status == 409


def test_restarting_the_apiserver_keeps_data(
    control_plane: ControlPlane, admin: ApiClient, namespace: str
) -> None:
    url_before = control_plane.server_url
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "survivor"},
        "data": {"key": "value"},
    }
    _created(admin.post(f"/api/v1/namespaces/{namespace}/configmaps", config_map))

    control_plane.restart_apiserver()
    after = control_plane.admin_client().get(f"/api/v1/namespaces/{namespace}/configmaps/survivor")

    assert control_plane.server_url == url_before
    assert (after.status, after.body["data"]) == (200, {"key": "value"})


def test_service_account_token_without_rbac_is_forbidden(
    control_plane: ControlPlane, namespace: str
) -> None:
    token = control_plane.service_account_token(namespace, "nobody")

    listed = control_plane.token_client(token).get(f"/api/v1/namespaces/{namespace}/pods")

    # 403, not 401: the token authenticated, and only authorization said no.
    assert listed.status == 403
    assert f"system:serviceaccount:{namespace}:nobody" in listed.body["message"]


def test_service_account_token_gains_access_through_a_role_binding(
    control_plane: ControlPlane, admin: ApiClient, namespace: str
) -> None:
    token = control_plane.service_account_token(namespace, "reader")
    client = control_plane.token_client(token)
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    # An explicit Role: the aggregated ClusterRoles (view, edit, admin) stay empty here, since
    # their rules are filled in by a kube-controller-manager controller.
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "reader-pod-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}],
    }
    pods_path = f"/api/v1/namespaces/{namespace}/pods"
    before = client.get(pods_path)

    _created(admin.post(f"{rbac}/roles", role))
    _created(admin.post(f"{rbac}/rolebindings", binding))
    after = _poll(lambda: client.get(pods_path), until=lambda r: r.status == 200)

    assert before.status == 403
    assert after.status == 200
    assert client.get(f"/api/v1/namespaces/{namespace}/configmaps").status == 403
