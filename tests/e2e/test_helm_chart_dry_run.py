"""Every object the Helm chart renders passes a server-side dry run on a real kube-apiserver.

With every optional template on, the chart renders a ServiceMonitor and a PrometheusRule,
Prometheus Operator custom resources; their CRDs (reduced to what a dry run needs: the group,
kinds, scope and an open schema) are installed on a control plane of this module's own, so
the session's shared one keeps serving no such kind (test_daemon_deploy_manifests.py relies on
that).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.deploy.helm import EVERYTHING_ON
from tests.deploy.helm import Manifest
from tests.deploy.helm import render
from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import poll_until
from tests.e2e.manifests import KindNotServedError
from tests.e2e.manifests import apply
from tests.e2e.manifests import object_path

pytestmark = pytest.mark.e2e

CRD_TIMEOUT_S = 30.0
MONITORING = "monitoring.coreos.com"


def _crd(kind: str, plural: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{MONITORING}"},
        "spec": {
            "group": MONITORING,
            "scope": "Namespaced",
            "names": {
                "kind": kind,
                "plural": plural,
                "singular": kind.lower(),
                "listKind": f"{kind}List",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def monitoring_admin(e2e_binaries: ControlPlaneBinaries) -> Iterator[ApiClient]:
    plane = ControlPlane(e2e_binaries)
    plane.start()
    try:
        admin = plane.admin_client()
        for kind, plural in (
            ("ServiceMonitor", "servicemonitors"),
            ("PrometheusRule", "prometheusrules"),
        ):
            created = admin.post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", _crd(kind, plural)
            )
            assert created.status == 201, created
        probe = {
            "apiVersion": f"{MONITORING}/v1",
            "kind": "PrometheusRule",
            "metadata": {"name": "x"},
        }

        def served() -> bool:
            try:
                object_path(admin, probe)
            except KindNotServedError:
                return False
            return True

        poll_until(served, "the monitoring CRDs served", timeout_s=CRD_TIMEOUT_S)
        yield admin
    finally:
        plane.stop()


def _cases() -> list[tuple[str, list[str]]]:
    return [("defaults", []), ("everything-on", list(EVERYTHING_ON))]


@pytest.mark.parametrize("values", [v for _, v in _cases()], ids=[i for i, _ in _cases()])
def test_every_rendered_object_passes_a_server_side_dry_run(
    monitoring_admin: ApiClient, values: list[str]
) -> None:
    documents: list[Manifest] = render(*values)
    assert documents
    for manifest in documents:
        answer = apply(monitoring_admin, manifest, dry_run=True)
        where = f"{manifest['kind']}/{manifest['metadata']['name']}"
        assert answer.status in (200, 201), (where, answer)
        assert answer.body["kind"] == manifest["kind"], where
    if values:
        kinds = {d["kind"] for d in documents}
        assert {"ServiceMonitor", "PrometheusRule", "PriorityClass"} <= kinds
