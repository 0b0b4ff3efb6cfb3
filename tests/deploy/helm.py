"""The helm CLI for the chart tests, and rendering the chart with it.

helm is built from its Go module by hack/build-helm.sh into the same cache as the e2e binaries
(.ci/run calls it first; here it only confirms the cached build). There is no skipping: without
helm the chart tests fail.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.manifests import DEPLOY_DIR
from tests.deploy.manifests import REPO_ROOT

CHART_DIR = DEPLOY_DIR / "helm" / "kube-pyscheduler"
BUILD_SCRIPT = REPO_ROOT / "hack" / "build-helm.sh"
RELEASE = "kube-pyscheduler"
NAMESPACE = "kube-system"
BUILD_TIMEOUT_S = 30 * 60

Manifest = dict[str, Any]


@functools.cache
def helm_binary() -> Path:
    """Builds helm when the cache lacks the pinned version; returns its path."""
    built = subprocess.run(
        ["bash", str(BUILD_SCRIPT)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    tail = "\n".join(built.stderr.splitlines()[-30:])
    assert built.returncode == 0, f"{BUILD_SCRIPT.name} failed:\n{tail}"
    path = Path(built.stdout.strip().splitlines()[-1])
    assert path.is_file(), f"{BUILD_SCRIPT.name} printed {path}, which does not exist"
    return path


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(helm_binary()), *args], capture_output=True, text=True, timeout=120, check=False
    )


def render(*values: str) -> list[Manifest]:
    """`helm template` of the chart with `--set`/`--set-json` style arguments."""
    rendered = helm("template", RELEASE, str(CHART_DIR), "--namespace", NAMESPACE, *values)
    assert rendered.returncode == 0, rendered.stderr
    return [doc for doc in yaml.safe_load_all(rendered.stdout) if doc]


def render_error(*values: str) -> str:
    rendered = helm("template", RELEASE, str(CHART_DIR), "--namespace", NAMESPACE, *values)
    assert rendered.returncode != 0, "expected the chart to refuse these values"
    return rendered.stderr


def by_kind(documents: list[Manifest]) -> dict[tuple[str, str], Manifest]:
    return {(d["kind"], d["metadata"]["name"]): d for d in documents}


EVERYTHING_ON = (
    "--set=metrics.serviceMonitor.enabled=true",
    "--set=metrics.prometheusRule.enabled=true",
    "--set=priorityClass.create=true",
    "--set=priorityClass.name=kube-pyscheduler-critical",
    "--set=plugins.packages[0]=example-plugins==1.0",
    "--set=plugins.modules[0]=example_plugins.spec:SPEC",
)
"""Values that turn on every optional template."""
