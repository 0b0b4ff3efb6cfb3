"""deploy/crds/: the CustomResourceDefinitions the gang and quota plugins read."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from plugins.coscheduling.dialects import API_GROUPS
from plugins.coscheduling.dialects import NATIVE_RESOURCE
from tests.deploy.manifests import DEPLOY_DIR
from tests.deploy.manifests import KUSTOMIZATION
from tests.deploy.manifests import object_files

CRD_DIR = DEPLOY_DIR / "crds"
CRDS = object_files(CRD_DIR)


def _load(path: Any) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def _structural(schema: dict[str, Any], where: str) -> None:
    """Every node states its type (or is int-or-string), as a structural schema must."""
    if schema.get("x-kubernetes-int-or-string"):
        return
    assert "type" in schema, f"{where}: no type"
    for name, child in (schema.get("properties") or {}).items():
        _structural(child, f"{where}.{name}")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        _structural(extra, f"{where}.*")


def test_kustomization_lists_every_crd() -> None:
    listed = yaml.safe_load((CRD_DIR / KUSTOMIZATION).read_text(encoding="utf-8"))["resources"]
    assert sorted(listed) == sorted(p.name for p in CRDS)


@pytest.mark.parametrize("path", CRDS, ids=lambda p: p.name)
def test_schema_is_structural_with_a_status_subresource(path: Any) -> None:
    crd = _load(path)
    assert crd["kind"] == "CustomResourceDefinition"
    for version in crd["spec"]["versions"]:
        _structural(version["schema"]["openAPIV3Schema"], crd["metadata"]["name"])
        assert version["subresources"] == {"status": {}}


def test_every_pod_group_dialect_we_define_is_one_the_plugin_reads() -> None:
    groups = {
        _load(p)["spec"]["group"] for p in CRDS if _load(p)["spec"]["names"]["kind"] == "PodGroup"
    }
    # The native group is Kubernetes' own API, served by the apiserver, not a CRD.
    assert groups == {g for r, g in API_GROUPS.items() if r != NATIVE_RESOURCE}
