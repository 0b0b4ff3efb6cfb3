"""Resource names to API paths."""

from __future__ import annotations

import pytest

from scheduler.cluster.kube.resources import ApiResource
from scheduler.cluster.kube.resources import ResourceTable
from scheduler.framework.errors import NotFoundError

TABLE = ResourceTable()


@pytest.mark.parametrize(
    ("resource", "namespace", "expected"),
    [
        ("pods", "team-a", "/api/v1/namespaces/team-a/pods"),
        ("pods", None, "/api/v1/pods"),
        ("pods", "", "/api/v1/pods"),
        ("nodes", "ignored", "/api/v1/nodes"),
        ("leases", "kube-system", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"),
        ("events", "default", "/apis/events.k8s.io/v1/namespaces/default/events"),
        ("poddisruptionbudgets", None, "/apis/policy/v1/poddisruptionbudgets"),
        ("storageclasses", None, "/apis/storage.k8s.io/v1/storageclasses"),
        ("csinodes", None, "/apis/storage.k8s.io/v1/csinodes"),
        ("csidrivers", None, "/apis/storage.k8s.io/v1/csidrivers"),
        ("csistoragecapacities", "s", "/apis/storage.k8s.io/v1/namespaces/s/csistoragecapacities"),
        ("replicasets", "a", "/apis/apps/v1/namespaces/a/replicasets"),
        ("statefulsets", None, "/apis/apps/v1/statefulsets"),
        ("podgroups", "b", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/b/podgroups"),
        ("elasticquotas", None, "/apis/scheduling.x-k8s.io/v1alpha1/elasticquotas"),
    ],
    ids=str,
)
def test_collection_paths(resource: str, namespace: str | None, expected: str) -> None:
    assert TABLE[resource].collection_path(namespace) == expected


@pytest.mark.parametrize(
    ("resource", "namespace", "name", "subresource", "expected"),
    [
        ("pods", "a", "web", "", "/api/v1/namespaces/a/pods/web"),
        ("pods", "a", "web", "binding", "/api/v1/namespaces/a/pods/web/binding"),
        ("pods", "a", "web", "status", "/api/v1/namespaces/a/pods/web/status"),
        # Namespaced objects named without a namespace are in `default`.
        ("pods", "", "web", "", "/api/v1/namespaces/default/pods/web"),
        ("nodes", "", "n1", "", "/api/v1/nodes/n1"),
        ("nodes", "stray", "n1", "status", "/api/v1/nodes/n1/status"),
        (
            "leases",
            "kube-system",
            "sched",
            "",
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/sched",
        ),
        (
            "persistentvolumeclaims",
            "a",
            "data",
            "",
            "/api/v1/namespaces/a/persistentvolumeclaims/data",
        ),
        # A malformed name stays inside its path segment.
        ("pods", "a", "x/../y", "", "/api/v1/namespaces/a/pods/x%2F..%2Fy"),
    ],
    ids=str,
)
def test_object_paths(
    resource: str, namespace: str, name: str, subresource: str, expected: str
) -> None:
    assert TABLE[resource].object_path(namespace, name, subresource) == expected


def test_an_unknown_resource_is_not_found() -> None:
    with pytest.raises(NotFoundError, match=r"could not find the requested resource \(widgets\)"):
        TABLE["widgets"]


def test_registered_resources_become_addressable() -> None:
    table = ResourceTable()
    table.register(ApiResource("widgets", "example.com", "v1beta1", "Widget", namespaced=True))
    assert "widgets" in table
    assert table["widgets"].object_path("a", "w") == (
        "/apis/example.com/v1beta1/namespaces/a/widgets/w"
    )
    assert "widgets" not in TABLE
