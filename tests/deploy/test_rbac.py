"""RBAC in deploy/: exactly the calls the scheduler makes, nothing broader.

Rules are expanded into single grants (group, resource, verb, resourceNames) so each check reads
as a statement about one permission.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from tests.deploy.manifests import Manifest
from tests.deploy.manifests import Manifests

NAME = "kube-pyscheduler"
NAMESPACE = "kube-system"
LEADER_ROLE = ("Role", "kube-pyscheduler-leader-election")
READ_VERBS = frozenset({"get", "list", "watch"})


@dataclass(frozen=True)
class Grant:
    group: str
    resource: str
    verb: str
    names: tuple[str, ...] = ()


def grants(role: Manifest) -> set[Grant]:
    return {
        Grant(group, resource, verb, tuple(rule.get("resourceNames") or ()))
        for rule in role.get("rules") or ()
        for group in rule.get("apiGroups") or ()
        for resource in rule.get("resources") or ()
        for verb in rule["verbs"]
    }


def roles(objects: Manifests) -> list[Manifest]:
    return [obj for (kind, _), obj in objects.items() if kind in {"Role", "ClusterRole"}]


@pytest.fixture(scope="session")
def cluster_grants(base: Manifests) -> set[Grant]:
    return grants(base[("ClusterRole", NAME)])


# What the daemon calls, cluster-wide: list/watch for its informers, and its few writes.
REQUIRED = [
    Grant("", "pods", "get"),
    Grant("", "pods", "list"),
    Grant("", "pods", "watch"),
    Grant("", "pods", "delete"),
    Grant("", "pods/binding", "create"),
    Grant("", "pods/status", "patch"),
    Grant("", "pods/status", "update"),
    Grant("", "nodes", "list"),
    Grant("", "nodes", "watch"),
    Grant("", "namespaces", "list"),
    Grant("", "namespaces", "watch"),
    Grant("events.k8s.io", "events", "create"),
    Grant("events.k8s.io", "events", "patch"),
    # The secure port's delegated authentication and authorization.
    Grant("authentication.k8s.io", "tokenreviews", "create"),
    Grant("authorization.k8s.io", "subjectaccessreviews", "create"),
    *(
        Grant(group, resource, verb)
        for group, resource in [
            ("", "persistentvolumeclaims"),
            ("", "persistentvolumes"),
            ("storage.k8s.io", "storageclasses"),
            ("storage.k8s.io", "csinodes"),
            ("storage.k8s.io", "csidrivers"),
            ("storage.k8s.io", "csistoragecapacities"),
            ("storage.k8s.io", "volumeattachments"),
            ("policy", "poddisruptionbudgets"),
            ("scheduling.x-k8s.io", "podgroups"),
            ("scheduling.x-k8s.io", "elasticquotas"),
            ("scheduling.sigs.k8s.io", "podgroups"),
            ("scheduling.k8s.io", "podgroups"),
            ("resource.k8s.io", "resourceclaims"),
            ("resource.k8s.io", "resourceslices"),
            ("resource.k8s.io", "deviceclasses"),
            # Watched only with DRADeviceTaintRules on; granted so the gate needs no new role.
            ("resource.k8s.io", "devicetaintrules"),
        ]
        for verb in ("list", "watch")
    ),
    Grant("resource.k8s.io", "resourceclaims", "get"),
    Grant("resource.k8s.io", "resourceclaims", "patch"),
    Grant("resource.k8s.io", "resourceclaims", "create"),
    Grant("resource.k8s.io", "resourceclaims", "delete"),
    Grant("resource.k8s.io", "resourceclaims/status", "patch"),
]

# Every cluster-wide write the scheduler is allowed: anything else must be read-only.
ALLOWED_WRITES = {
    Grant("", "pods", "delete"),
    Grant("", "pods/binding", "create"),
    Grant("", "pods/status", "patch"),
    Grant("", "pods/status", "update"),
    Grant("events.k8s.io", "events", "create"),
    Grant("events.k8s.io", "events", "patch"),
    Grant("events.k8s.io", "events", "update"),
    # VolumeBinding's PreBind: a volume's claimRef, a claim's selected-node annotation.
    Grant("", "persistentvolumes", "patch"),
    Grant("", "persistentvolumeclaims", "patch"),
    # Reviews create nothing that is stored: the server answers them and forgets them.
    Grant("authentication.k8s.io", "tokenreviews", "create"),
    Grant("authorization.k8s.io", "subjectaccessreviews", "create"),
    # PodGroup and ElasticQuota status, written by the leader.
    Grant("scheduling.x-k8s.io", "podgroups/status", "patch"),
    Grant("scheduling.x-k8s.io", "elasticquotas/status", "patch"),
    Grant("scheduling.sigs.k8s.io", "podgroups/status", "patch"),
    # DynamicResources: a claim's finalizer, then its allocation and reservedFor.
    Grant("resource.k8s.io", "resourceclaims", "patch"),
    Grant("resource.k8s.io", "resourceclaims/status", "patch"),
    # ... and the claim for a pod's extended resources that DeviceClasses provide.
    Grant("resource.k8s.io", "resourceclaims", "create"),
    Grant("resource.k8s.io", "resourceclaims", "delete"),
}


@pytest.mark.parametrize("grant", REQUIRED, ids=lambda g: f"{g.resource}.{g.verb}")
def test_cluster_role_grants_what_the_scheduler_calls(
    cluster_grants: set[Grant], grant: Grant
) -> None:
    assert grant in cluster_grants


def test_cluster_role_writes_only_what_the_scheduler_writes(cluster_grants: set[Grant]) -> None:
    writes = {g for g in cluster_grants if g.verb not in READ_VERBS}
    assert writes <= ALLOWED_WRITES, (
        f"unexpected writes: {sorted(map(str, writes - ALLOWED_WRITES))}"
    )


def test_cluster_role_leaves_secrets_configmaps_and_leases_alone(
    cluster_grants: set[Grant],
) -> None:
    # Leases and the authentication ConfigMap are granted in kube-system only.
    touched = {g.resource for g in cluster_grants}
    assert not touched & {"secrets", "configmaps", "leases"}


def test_no_rule_uses_a_wildcard_or_an_escalation_verb(
    base: Manifests, monitoring: Manifests
) -> None:
    for role in roles(base) + roles(monitoring):
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"):
                assert "*" not in (rule.get(field) or ()), f"{role['metadata']['name']}: {field}"
            assert not set(rule["verbs"]) & {"escalate", "bind", "impersonate"}


def test_lease_create_is_open_but_renewal_is_limited_to_our_lease(base: Manifests) -> None:
    role = base[LEADER_ROLE]
    assert role["metadata"]["namespace"] == NAMESPACE
    lease_grants = grants(role)
    assert {g.group for g in lease_grants} == {"coordination.k8s.io"}
    assert {g.resource for g in lease_grants} == {"leases"}
    # RBAC cannot check a name on create (the object does not exist yet).
    assert {g.verb for g in lease_grants if not g.names} == {"create"}
    assert {(g.verb, g.names) for g in lease_grants if g.names} == {
        ("get", (NAME,)),
        ("update", (NAME,)),
    }


def _configured_lease(base: Manifests) -> tuple[str, str]:
    config: dict[str, Any] = yaml.safe_load(
        base[("ConfigMap", f"{NAME}-config")]["data"]["config.yaml"]
    )
    election = config["leaderElection"]
    return election["resourceNamespace"], election["resourceName"]


def test_the_lease_the_scheduler_uses_is_the_one_it_may_renew(
    base: Manifests, container: Manifest
) -> None:
    namespace, name = _configured_lease(base)
    flag = next(a for a in container["args"] if a.startswith("--leader-elect-resource-name="))
    assert flag.partition("=")[2] == name
    assert namespace == base[LEADER_ROLE]["metadata"]["namespace"]
    renewable = {g.names for g in grants(base[LEADER_ROLE]) if g.verb == "update"}
    assert renewable == {(name,)}


@pytest.mark.parametrize(
    ("binding", "role_ref"),
    [
        (("ClusterRoleBinding", NAME), ("ClusterRole", NAME)),
        (("RoleBinding", "kube-pyscheduler-leader-election"), LEADER_ROLE),
        # Built into every cluster: reads the extension-apiserver-authentication ConfigMap.
        (
            ("RoleBinding", "kube-pyscheduler-authentication-reader"),
            ("Role", "extension-apiserver-authentication-reader"),
        ),
    ],
    ids=["cluster-role", "leader-election", "authentication-reader"],
)
def test_bindings_grant_the_roles_to_the_schedulers_service_account(
    base: Manifests, pod_spec: Manifest, binding: tuple[str, str], role_ref: tuple[str, str]
) -> None:
    obj = base[binding]
    assert (obj["roleRef"]["kind"], obj["roleRef"]["name"]) == role_ref
    assert obj["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert obj["subjects"] == [
        {"kind": "ServiceAccount", "name": pod_spec["serviceAccountName"], "namespace": NAMESPACE}
    ]
    assert ("ServiceAccount", pod_spec["serviceAccountName"]) in base
    if binding[0] == "RoleBinding":
        assert obj["metadata"]["namespace"] == NAMESPACE


def test_every_role_of_the_base_is_bound(base: Manifests) -> None:
    bound = {
        (obj["roleRef"]["kind"], obj["roleRef"]["name"])
        for (kind, _), obj in base.items()
        if kind in {"RoleBinding", "ClusterRoleBinding"}
    }
    defined = {(role["kind"], role["metadata"]["name"]) for role in roles(base)}
    assert defined <= bound
