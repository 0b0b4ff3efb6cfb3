"""Every manifest the daemon ships in deploy/ is accepted by a real kube-apiserver.

A server-side dry run goes through defaulting, admission and validation, and stores nothing.
It is a dry-run *apply* rather than a dry-run create, so it holds whether or not an earlier test
(the RBAC one) already created the same objects.

The ServiceMonitor and PrometheusRule of deploy/monitoring/ are left out: they are Prometheus
Operator custom resources, and the test apiserver has no such CRDs. A separate test pins that
reason down.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy.manifests import DEPLOY_DIR
from tests.deploy.manifests import MONITORING_DIR
from tests.deploy.manifests import object_files
from tests.e2e.api_client import ApiClient
from tests.e2e.manifests import KindNotServedError
from tests.e2e.manifests import Manifest
from tests.e2e.manifests import apply
from tests.e2e.manifests import object_path
from tests.e2e.manifests import read_manifests

pytestmark = pytest.mark.e2e

# Kinds whose CRDs a plain cluster (and this test apiserver) does not have.
CUSTOM_RESOURCE_KINDS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
}


def _documents(*directories: Path) -> list[tuple[str, Manifest]]:
    return [
        (f"{path.relative_to(DEPLOY_DIR)}:{doc['kind']}/{doc['metadata']['name']}", doc)
        for directory in directories
        for path in object_files(directory)
        for doc in read_manifests(path)
    ]


DOCUMENTS = _documents(DEPLOY_DIR, MONITORING_DIR)
BUILT_IN = [
    (i, d) for i, d in DOCUMENTS if (d["apiVersion"], d["kind"]) not in CUSTOM_RESOURCE_KINDS
]
CUSTOM = [(i, d) for i, d in DOCUMENTS if (d["apiVersion"], d["kind"]) in CUSTOM_RESOURCE_KINDS]


def test_the_manifests_are_all_found() -> None:
    kinds = {d["kind"] for _, d in BUILT_IN}
    assert {"ServiceAccount", "ClusterRole", "Deployment", "ConfigMap"} <= kinds
    assert sorted(d["kind"] for _, d in CUSTOM) == ["PrometheusRule", "ServiceMonitor"]


@pytest.mark.parametrize("manifest", [d for _, d in BUILT_IN], ids=[i for i, _ in BUILT_IN])
def test_manifest_passes_a_server_side_dry_run(admin: ApiClient, manifest: Manifest) -> None:
    answer = apply(admin, manifest, dry_run=True)

    assert answer.status in (200, 201), answer
    assert answer.body["kind"] == manifest["kind"]
    assert answer.body["metadata"]["name"] == manifest["metadata"]["name"]


@pytest.mark.parametrize("manifest", [d for _, d in CUSTOM], ids=[i for i, _ in CUSTOM])
def test_custom_resource_is_not_served_without_its_crd(
    admin: ApiClient, manifest: Manifest
) -> None:
    with pytest.raises(KindNotServedError):
        object_path(admin, manifest)
