"""A user the API server lets get, list and watch everything and write nothing: the identity
that read-only modes (shadow, explain) are tested under."""

from __future__ import annotations

from tests.e2e.api_client import ApiClient

RBAC = "/apis/rbac.authorization.k8s.io/v1"


def grant_read_only(admin: ApiClient, user: str) -> None:
    """A ClusterRole of get/list/watch on every resource, bound to `user` (both named after it)."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": user},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": user},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": user},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    for path, body in ((f"{RBAC}/clusterroles", role), (f"{RBAC}/clusterrolebindings", binding)):
        created = admin.post(path, body)
        assert created.status == 201, created
