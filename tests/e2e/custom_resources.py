"""Installing the CustomResourceDefinitions of deploy/crds/ on the test control plane."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.e2e.api_client import ApiClient
from tests.e2e.daemon import poll_until

CRD_DIR = Path(__file__).resolve().parents[2] / "deploy" / "crds"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ESTABLISH_TIMEOUT_S = 30.0


def crd_manifests() -> list[dict[str, Any]]:
    return [
        yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted(CRD_DIR.glob("*.yaml"))
        if path.name != "kustomization.yaml"
    ]


def install_crds(admin: ApiClient) -> None:
    """Create every CRD (already present is fine: the control plane is shared by the session)
    and wait until the server serves each of them."""
    names = []
    for manifest in crd_manifests():
        created = admin.post(CRD_PATH, manifest)
        assert created.status in (201, 409), created
        names.append(manifest["metadata"]["name"])

    def established() -> bool:
        for name in names:
            body = admin.get(f"{CRD_PATH}/{name}").body
            conditions = (body.get("status") or {}).get("conditions") or ()
            if not any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return False
        return True

    poll_until(established, "CRDs established", timeout_s=ESTABLISH_TIMEOUT_S)
