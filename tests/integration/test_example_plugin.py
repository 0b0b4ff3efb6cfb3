"""The example out-of-tree plugin works from its own installed package, with no scheduler change."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "demo-plugin"

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: demo-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: DemoPlugin
"""


def _node(name: str, demo_ok: bool) -> str:
    labels = '{"demo-ok": "true"}' if demo_ok else "{}"
    return (
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {labels}}}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
    )


def _pod(name: str) -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
        "spec: {schedulerName: demo-scheduler, containers: [{name: c, image: pause}]}\n"
    )


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pip-install the example into a directory of its own (its own dist-info, entry points)."""
    target = tmp_path_factory.mktemp("site")
    # Build from a copy: pip leaves build/ and egg-info behind in the source directory.
    source = tmp_path_factory.mktemp("source") / "demo-plugin"
    shutil.copytree(EXAMPLE, source)
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    subprocess.run([*command, "--target", str(target), str(source)], check=True)
    assert list(target.glob("kube_pyscheduler_demo-*.dist-info"))
    return target


def _simulate(site: Path, workdir: Path, documents: list[str]) -> Any:
    config = workdir / "config.yaml"
    config.write_text(CONFIG)
    scenario = workdir / "cluster.yaml"
    scenario.write_text("---\n".join(documents))
    env = {**os.environ, "PYTHONPATH": str(site)}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "scheduler.app.cli",
            "simulate",
            "--config",
            str(config),
            str(scenario),
            "--output",
            "json",
            "--no-progress",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(completed.stdout)


def test_demo_plugin_filters_and_scores_from_its_own_package(
    installed_example: Path, tmp_path: Path
) -> None:
    documents = [_node("ok-1", True), _node("ok-2", True), _node("plain", False)]
    documents += [_pod(f"p{i}") for i in range(6)]
    result = _simulate(installed_example, tmp_path, documents)
    nodes = {p["name"]: p["node"] for p in result["pods"]}
    assert set(nodes.values()) <= {"ok-1", "ok-2"}
    assert None not in nodes.values()


def test_demo_plugin_rejection_reason(installed_example: Path, tmp_path: Path) -> None:
    result = _simulate(
        installed_example, tmp_path, [_node("a", False), _node("b", False), _pod("p")]
    )
    (pod,) = result["pods"]
    assert pod["status"] == "Unschedulable"
    # DefaultPreemption (a default plugin) found nothing to preempt and says so, as upstream.
    assert pod["message"] == (
        "0/2 nodes are available: 2 node not demo-ok. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )


def test_without_the_package_the_plugin_is_unknown(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    completed = subprocess.run(
        [sys.executable, "-m", "scheduler.app.cli", "validate-config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 2
    assert 'unknown plugin "DemoPlugin"' in completed.stderr


def test_the_readme_commands_run_with_the_files_the_example_ships(
    installed_example: Path, tmp_path: Path
) -> None:
    example = tmp_path / "demo-plugin"
    shutil.copytree(EXAMPLE, example)
    env = {**os.environ, "PYTHONPATH": str(installed_example)}
    readme_command = ["simulate", "--config", "demo-config.yaml", "cluster.yaml"]
    simulated = subprocess.run(
        [sys.executable, "-m", "scheduler.app.cli", *readme_command, "--output", "json"],
        cwd=example,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert simulated.returncode == 0, simulated.stderr
    nodes = {p["name"]: p["node"] for p in json.loads(simulated.stdout)["pods"]}
    assert nodes == {"demo-0": "ok-1", "demo-1": "ok-1"}
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=example,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "3 passed" in tested.stdout
