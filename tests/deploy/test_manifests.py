"""The kube-system deployment in deploy/: plain objects, wired together, hardened, valid config.

RBAC has its own module (test_rbac.py). Every file must be an object `kubectl apply -f` takes
as it is (the e2e suite dry-runs each one against a real API server), so nothing here may rely
on kustomize filling a value in.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.config import load_config_text
from scheduler.objects.quantity import parse_quantity
from scheduler.runtime.discovery import PluginRegistry
from tests.deploy.manifests import DEPLOY_DIR
from tests.deploy.manifests import KUSTOMIZATION
from tests.deploy.manifests import MONITORING_DIR
from tests.deploy.manifests import Manifest
from tests.deploy.manifests import Manifests
from tests.deploy.manifests import object_files

NAME = "kube-pyscheduler"
NAMESPACE = "kube-system"
NAME_LABEL = "app.kubernetes.io/name"
INSTANCE_LABEL = "app.kubernetes.io/instance"
SECURE_PORT = 10259
NON_ROOT_UID = 65532

# kind -> (the GA apiVersion a v1.36 API server serves it at, namespaced?)
KNOWN_KINDS: dict[str, tuple[str, bool]] = {
    "ServiceAccount": ("v1", True),
    "ConfigMap": ("v1", True),
    "Service": ("v1", True),
    "Deployment": ("apps/v1", True),
    "PodDisruptionBudget": ("policy/v1", True),
    "Role": ("rbac.authorization.k8s.io/v1", True),
    "RoleBinding": ("rbac.authorization.k8s.io/v1", True),
    "ClusterRole": ("rbac.authorization.k8s.io/v1", False),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io/v1", False),
    "ServiceMonitor": ("monitoring.coreos.com/v1", True),
    "PrometheusRule": ("monitoring.coreos.com/v1", True),
}

ALL_FILES = object_files(DEPLOY_DIR) + object_files(MONITORING_DIR)


def _file_id(path: Path) -> str:
    return str(path.relative_to(DEPLOY_DIR))


def _kustomization(directory: Path) -> Manifest:
    data: Manifest = yaml.safe_load((directory / KUSTOMIZATION).read_text(encoding="utf-8"))
    return data


def _matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def _flags(args: list[str]) -> dict[str, str]:
    """`--name=value` arguments as a mapping (bare `--name` maps to "true")."""
    flags: dict[str, str] = {}
    for arg in args:
        if arg.startswith("--"):
            name, _, value = arg[2:].partition("=")
            flags[name] = value or "true"
    return flags


def _security(pod_spec: Manifest, container: Manifest) -> dict[str, Any]:
    """The security settings in force for the container: its own override the pod's."""
    return {**(pod_spec.get("securityContext") or {}), **(container.get("securityContext") or {})}


# --- every file: a plain, complete, apply-able object ---------------------------------------


@pytest.mark.parametrize("path", ALL_FILES, ids=_file_id)
def test_each_file_is_one_complete_object(path: Path) -> None:
    documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    assert len(documents) == 1, "one object per file, so each can be applied and dry-run alone"
    obj = documents[0]
    assert obj["kind"] in KNOWN_KINDS, f"unexpected kind {obj['kind']}"
    api_version, namespaced = KNOWN_KINDS[obj["kind"]]
    assert obj["apiVersion"] == api_version
    meta = obj["metadata"]
    assert meta["name"].startswith(NAME)
    assert meta["labels"][NAME_LABEL] == NAME, "labelled even without kustomize's labels"
    if namespaced:
        assert meta.get("namespace") == NAMESPACE, "explicit namespace: `apply -f` needs it"
    else:
        assert "namespace" not in meta


@pytest.mark.parametrize("path", ALL_FILES, ids=_file_id)
def test_no_placeholder_is_left_for_a_tool_to_fill(path: Path) -> None:
    obj = yaml.safe_load(path.read_text(encoding="utf-8"))
    if obj["kind"] == "PrometheusRule":
        # Alert annotations are Prometheus templates ({{ $labels.x }}), filled when it fires.
        for group in obj["spec"]["groups"]:
            for rule in group["rules"]:
                rule.pop("annotations", None)
    text = yaml.safe_dump(obj)
    for marker in ("$(", "${", "{{"):
        assert marker not in text, f"{marker!r}: manifests must apply as they are"


@pytest.mark.parametrize(
    ("directory", "namespace"),
    [(DEPLOY_DIR, NAMESPACE), (MONITORING_DIR, NAMESPACE)],
    ids=["base", "monitoring"],
)
def test_kustomization_lists_exactly_the_object_files(directory: Path, namespace: str) -> None:
    kustomization = _kustomization(directory)
    assert kustomization["namespace"] == namespace
    assert sorted(kustomization["resources"]) == [p.name for p in object_files(directory)]
    [labels] = kustomization["labels"]
    assert labels["pairs"] == {NAME_LABEL: NAME}
    # A Deployment's selector is immutable: kustomize must never rewrite it.
    assert labels["includeSelectors"] is False


def test_service_monitor_is_only_in_the_optional_overlay(
    base: Manifests, monitoring: Manifests
) -> None:
    assert not any(kind in ("ServiceMonitor", "PrometheusRule") for kind, _ in base)
    assert ("ServiceMonitor", NAME) in monitoring
    assert ("PrometheusRule", NAME) in monitoring


# --- the Deployment --------------------------------------------------------------------------


def test_deployment_runs_two_replicas_selected_by_its_own_labels(deployment: Manifest) -> None:
    assert deployment["spec"]["replicas"] == 2
    template_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert _matches(deployment["spec"]["selector"]["matchLabels"], template_labels)


def test_selectors_name_the_instance(base: Manifests, deployment: Manifest) -> None:
    # A second scheduler from an overlay shares app.kubernetes.io/name: without the instance
    # label, this Service and disruption budget would select its pods too (and a pod under two
    # budgets cannot be evicted).
    selectors = {
        "Deployment": deployment["spec"]["selector"]["matchLabels"],
        "Service": base[("Service", NAME)]["spec"]["selector"],
        "PodDisruptionBudget": base[("PodDisruptionBudget", NAME)]["spec"]["selector"][
            "matchLabels"
        ],
    }
    for kind, selector in selectors.items():
        assert selector == {NAME_LABEL: NAME, INSTANCE_LABEL: NAME}, kind


def test_replicas_land_on_different_nodes(deployment: Manifest, pod_spec: Manifest) -> None:
    template_labels = deployment["spec"]["template"]["metadata"]["labels"]
    spread_by_node = [
        c
        for c in pod_spec.get("topologySpreadConstraints") or ()
        if c["topologyKey"] == "kubernetes.io/hostname"
        and c["whenUnsatisfiable"] == "DoNotSchedule"
        and c["maxSkew"] == 1
        and _matches(c["labelSelector"]["matchLabels"], template_labels)
    ]
    required_anti_affinity = [
        term
        for term in (
            ((pod_spec.get("affinity") or {}).get("podAntiAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            )
            or ()
        )
        if term["topologyKey"] == "kubernetes.io/hostname"
        and _matches(term["labelSelector"]["matchLabels"], template_labels)
    ]
    assert spread_by_node or required_anti_affinity


def test_the_scheduler_is_placed_by_the_default_scheduler(pod_spec: Manifest) -> None:
    # Naming itself would leave its own pods Pending forever on a fresh install.
    assert pod_spec.get("schedulerName", "default-scheduler") == "default-scheduler"


def test_pod_is_critical_and_stops_in_time(pod_spec: Manifest) -> None:
    assert pod_spec["priorityClassName"] == "system-cluster-critical"
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    assert pod_spec["serviceAccountName"] == NAME


def test_args_run_with_the_mounted_config_and_own_lease(
    base: Manifests, pod_spec: Manifest, container: Manifest
) -> None:
    args = container["args"]
    assert args[0] == "run", "`args` replaces the image's CMD, so the subcommand comes first"
    flags = _flags(args[1:])
    assert flags["leader-elect"] == "true"
    assert flags["leader-elect-resource-name"] == NAME

    config_path = Path(flags["config"])
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    mount = mounts[str(config_path.parent)]
    assert mount.get("readOnly") is True
    volumes = {v["name"]: v for v in pod_spec["volumes"]}
    config_map_name = volumes[mount["name"]]["configMap"]["name"]
    assert config_path.name in base[("ConfigMap", config_map_name)]["data"]


@pytest.mark.parametrize(
    ("probe", "path"),
    [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")],
)
def test_probes_use_the_https_health_endpoints(container: Manifest, probe: str, path: str) -> None:
    http_get = container[probe]["httpGet"]
    assert http_get["scheme"] == "HTTPS"
    assert http_get["path"] == path
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports.get(http_get["port"], http_get["port"]) == SECURE_PORT


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("runAsNonRoot", True),
        ("runAsUser", NON_ROOT_UID),
        ("readOnlyRootFilesystem", True),
        ("allowPrivilegeEscalation", False),
        ("seccompProfile", {"type": "RuntimeDefault"}),
    ],
)
def test_container_runs_unprivileged(
    pod_spec: Manifest, container: Manifest, field: str, expected: object
) -> None:
    assert _security(pod_spec, container).get(field) == expected


def test_container_drops_every_capability(pod_spec: Manifest, container: Manifest) -> None:
    capabilities = _security(pod_spec, container)["capabilities"]
    assert capabilities["drop"] == ["ALL"]
    assert not capabilities.get("add")
    assert not _security(pod_spec, container).get("privileged")


def test_tmp_is_the_one_writable_path(pod_spec: Manifest, container: Manifest) -> None:
    volumes = {v["name"]: v for v in pod_spec["volumes"]}
    writable = [m for m in container["volumeMounts"] if not m.get("readOnly")]
    assert [m["mountPath"] for m in writable] == ["/tmp"]
    assert "emptyDir" in volumes[writable[0]["name"]]


@pytest.mark.parametrize("resource", ["cpu", "memory"])
def test_resources_are_requested_and_bounded(container: Manifest, resource: str) -> None:
    request = parse_quantity(container["resources"]["requests"][resource])
    limit = parse_quantity(container["resources"]["limits"][resource])
    assert 0 < request <= limit


# --- Service, disruption budget and ServiceMonitor -------------------------------------------


def test_service_exposes_the_secure_port_of_the_pods(
    base: Manifests, deployment: Manifest, container: Manifest
) -> None:
    service = base[("Service", NAME)]["spec"]
    assert _matches(service["selector"], deployment["spec"]["template"]["metadata"]["labels"])
    [port] = service["ports"]
    assert port["name"] == "https-metrics"
    assert port["port"] == SECURE_PORT
    container_ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert container_ports.get(port["targetPort"], port["targetPort"]) == SECURE_PORT


def test_disruptions_take_one_replica_at_a_time(base: Manifests, deployment: Manifest) -> None:
    budget = base[("PodDisruptionBudget", NAME)]["spec"]
    assert budget["maxUnavailable"] == 1
    template_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert _matches(budget["selector"]["matchLabels"], template_labels)


def test_service_monitor_scrapes_the_service_over_https(
    base: Manifests, monitoring: Manifests
) -> None:
    service = base[("Service", NAME)]
    spec = monitoring[("ServiceMonitor", NAME)]["spec"]
    assert _matches(spec["selector"]["matchLabels"], service["metadata"]["labels"])
    assert service["metadata"]["namespace"] in spec["namespaceSelector"]["matchNames"]
    endpoints = spec["endpoints"]
    assert [endpoint["path"] for endpoint in endpoints] == ["/metrics", "/metrics/resources"]
    for endpoint in endpoints:
        assert endpoint["port"] == service["spec"]["ports"][0]["name"]
        assert endpoint["scheme"] == "https"
        assert endpoint["tlsConfig"]["insecureSkipVerify"] is True
        token = "/var/run/secrets/kubernetes.io/serviceaccount/token"
        assert endpoint["bearerTokenFile"] == token


# --- the embedded KubeSchedulerConfiguration -------------------------------------------------


def test_configmap_holds_a_valid_configuration_with_one_named_profile(
    base: Manifests, container: Manifest
) -> None:
    config_path = Path(_flags(container["args"][1:])["config"])
    text = base[("ConfigMap", f"{NAME}-config")]["data"][config_path.name]
    config, profiles = load_config_text(text, PluginRegistry.discover(), source=config_path.name)
    assert [p.scheduler_name for p in profiles] == [NAME]
    election = config.leader_election
    assert election.leader_elect is True
    assert (election.resource_namespace, election.resource_name) == (NAMESPACE, NAME)
