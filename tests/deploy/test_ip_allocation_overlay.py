"""deploy/ip-allocation/: exactly what IPAllocation adds to the base role, bound to the same
ServiceAccount, and nothing the base already grants or must not."""

from __future__ import annotations

import yaml

from plugins.ip_allocation.pool import API_GROUP
from plugins.ip_allocation.pool import IP_POOLS
from tests.deploy.manifests import DEPLOY_DIR
from tests.deploy.manifests import KUSTOMIZATION
from tests.deploy.manifests import Manifests
from tests.deploy.manifests import object_files
from tests.deploy.manifests import read_objects
from tests.deploy.test_rbac import Grant
from tests.deploy.test_rbac import grants

OVERLAY = DEPLOY_DIR / "ip-allocation"
ROLE = ("ClusterRole", "kube-pyscheduler-ip-allocation")


def overlay() -> Manifests:
    return read_objects(OVERLAY)


def test_the_overlay_grants_ip_allocations_calls_only() -> None:
    assert grants(overlay()[ROLE]) == {
        Grant(API_GROUP, IP_POOLS, "get"),
        Grant(API_GROUP, IP_POOLS, "list"),
        Grant(API_GROUP, IP_POOLS, "watch"),
        Grant(API_GROUP, f"{IP_POOLS}/status", "patch"),
        Grant("", "pods", "patch"),
    }


def test_the_base_role_still_does_not_write_pods(base: Manifests) -> None:
    base_grants = grants(base[("ClusterRole", "kube-pyscheduler")])
    assert Grant("", "pods", "patch") not in base_grants
    assert Grant("", "pods", "get") in base_grants  # the re-read before a release


def test_the_overlay_binds_its_role_to_the_schedulers_service_account(base: Manifests) -> None:
    binding = overlay()[("ClusterRoleBinding", "kube-pyscheduler-ip-allocation")]
    assert (binding["roleRef"]["kind"], binding["roleRef"]["name"]) == ROLE
    base_binding = base[("ClusterRoleBinding", "kube-pyscheduler")]
    assert binding["subjects"] == base_binding["subjects"]


def test_the_kustomization_lists_exactly_the_object_files() -> None:
    kustomization = yaml.safe_load((OVERLAY / KUSTOMIZATION).read_text(encoding="utf-8"))
    assert sorted(kustomization["resources"]) == [p.name for p in object_files(OVERLAY)]
    assert kustomization["labels"][0]["includeSelectors"] is False
