"""The Helm chart: lint-clean, rendering what its values say, and in step with deploy/."""

from __future__ import annotations

import yaml

from scheduler.app.cli import build_parser
from scheduler.config import load_config_dict
from scheduler.runtime.discovery import PluginRegistry
from tests.deploy.helm import CHART_DIR
from tests.deploy.helm import EVERYTHING_ON
from tests.deploy.helm import Manifest
from tests.deploy.helm import by_kind
from tests.deploy.helm import helm
from tests.deploy.helm import render
from tests.deploy.helm import render_error
from tests.deploy.manifests import Manifests

NAME = "kube-pyscheduler"


def _deployment(documents: list[Manifest]) -> Manifest:
    return by_kind(documents)[("Deployment", NAME)]


def _container(documents: list[Manifest]) -> Manifest:
    [container] = _deployment(documents)["spec"]["template"]["spec"]["containers"]
    return container  # type: ignore[no-any-return]


def test_lint_is_clean() -> None:
    linted = helm("lint", "--strict", str(CHART_DIR))

    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert "[WARNING]" not in linted.stdout and "[ERROR]" not in linted.stdout


def test_defaults_render_the_base_objects_and_no_operator_ones() -> None:
    kinds = sorted(d["kind"] for d in render())

    assert kinds == sorted(
        [
            "ClusterRole",
            "ClusterRole",
            "ClusterRoleBinding",
            "ConfigMap",
            "Deployment",
            "Pod",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "RoleBinding",
            "Service",
            "ServiceAccount",
        ]
    )


def test_rbac_and_alert_are_those_of_deploy(base: Manifests, monitoring: Manifests) -> None:
    rendered = by_kind(render(*EVERYTHING_ON))

    assert rendered[("ClusterRole", NAME)]["rules"] == base[("ClusterRole", NAME)]["rules"]
    leases = rendered[("Role", f"{NAME}-leader-election")]["rules"]
    assert leases == base[("Role", f"{NAME}-leader-election")]["rules"]
    rule = rendered[("PrometheusRule", NAME)]["spec"]
    assert rule == monitoring[("PrometheusRule", NAME)]["spec"]
    monitor = rendered[("ServiceMonitor", NAME)]["spec"]["endpoints"]
    assert monitor == monitoring[("ServiceMonitor", NAME)]["spec"]["endpoints"]


def test_the_configuration_is_one_the_scheduler_accepts() -> None:
    profiles = '[{"schedulerName":"a"},{"schedulerName":"b","percentageOfNodesToScore":50}]'
    rendered = by_kind(render(f"--set-json=profiles={profiles}", "--set=extraConfig.parallelism=8"))
    document = yaml.safe_load(rendered[("ConfigMap", f"{NAME}-config")]["data"]["config.yaml"])

    config, effective = load_config_dict(document, PluginRegistry.discover())

    assert [p.scheduler_name for p in effective] == ["a", "b"]
    assert config.parallelism == 8
    assert config.leader_election.resource_name == NAME
    assert config.leader_election.resource_namespace == "kube-system"


def test_the_container_arguments_are_ones_the_cli_accepts() -> None:
    container = _container(render(*EVERYTHING_ON, "--set=plugins.autoload=false"))
    args = build_parser().parse_args(container["args"])

    assert args.command == "run"
    assert args.config.as_posix() == "/etc/kube-pyscheduler/config.yaml"
    assert args.plugin == ["example_plugins.spec:SPEC"]
    assert args.no_plugin_autoload is True


def test_plugin_packages_are_installed_where_the_scheduler_imports_them() -> None:
    documents = render("--set=plugins.packages[0]=example-plugins==1.0")
    spec = _deployment(documents)["spec"]["template"]["spec"]
    [installer] = spec["initContainers"]
    container = _container(documents)

    assert installer["args"][-1] == "example-plugins==1.0"
    target = installer["command"][installer["command"].index("--target") + 1]
    assert {"name": "PYTHONPATH", "value": target} in container["env"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["plugins"] == target
    assert "initContainers" not in _deployment(render())["spec"]["template"]["spec"]


def test_values_reach_the_deployment() -> None:
    documents = render(
        "--set=replicas=3",
        "--set=image.repository=registry.example/kps",
        "--set=image.tag=9.9",
        "--set=resources.limits.cpu=2",
        "--set=priorityClass.name=high",
        "--set=podDisruptionBudget.enabled=false",
    )
    deployment = _deployment(documents)
    container = _container(documents)

    assert deployment["spec"]["replicas"] == 3
    assert container["image"] == "registry.example/kps:9.9"
    assert container["resources"]["limits"]["cpu"] == 2
    assert deployment["spec"]["template"]["spec"]["priorityClassName"] == "high"
    assert not [d for d in documents if d["kind"] == "PodDisruptionBudget"]
    priority = by_kind(render(*EVERYTHING_ON))[("PriorityClass", "kube-pyscheduler-critical")]
    # An integer, not the 1e+09 a large number in values would otherwise render as.
    assert priority["value"] == 1_000_000_000


def test_served_names_are_left_out_of_the_alert() -> None:
    rendered = by_kind(
        render(
            "--set=metrics.prometheusRule.enabled=true",
            "--set=profiles[0].schedulerName=batch.example",
            "--set=metrics.prometheusRule.servedSchedulerNames[0]=other",
        )
    )
    [group] = rendered[("PrometheusRule", NAME)]["spec"]["groups"]
    [rule] = group["rules"]

    assert 'scheduler_name!~"default-scheduler|batch\\\\.example|other"' in rule["expr"]


def test_values_it_cannot_use_are_refused_by_name() -> None:
    assert "additional properties 'replica' not allowed" in render_error("--set=replica=2")
    assert "/replicas" in render_error("--set=replicas=0")
    assert "leaderElection.enabled" in render_error(
        "--set=replicas=2", "--set=leaderElection.enabled=false"
    )
    assert "extraConfig.profiles" in render_error('--set-json=extraConfig={"profiles":[]}')
    assert "priorityClass.name" in render_error(
        "--set=priorityClass.create=true", "--set=priorityClass.name=system-node-critical"
    )
