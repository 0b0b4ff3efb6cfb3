"""docs/plugins.md works: its file blocks make a package that installs, passes its own tests
with the test kit, and schedules in `simulate`."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler.framework.contract import contract_problems

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
# A fenced block whose info string names the file it is: ```python file=src/x.py
BLOCK = re.compile(r"^```\w+ file=(?P<path>\S+)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def guide_files() -> dict[str, str]:
    """File path -> content; blocks naming the same file are joined in order."""
    files: dict[str, str] = {}
    for match in BLOCK.finditer(GUIDE.read_text()):
        path = match["path"]
        files[path] = files[path] + "\n\n" + match["body"] if path in files else match["body"]
    return files


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the package written from the guide, the directory it is installed into)."""
    root = tmp_path_factory.mktemp("guide") / "rack-aware"
    for relative, content in guide_files().items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    site = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
    subprocess.run([*command, str(site), str(root)], check=True)
    return root, site


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(site)}


def test_the_guide_names_every_file_of_the_package() -> None:
    assert set(guide_files()) == {
        "pyproject.toml",
        "src/rack_aware/args.py",
        "src/rack_aware/plugin.py",
        "src/rack_aware/__init__.py",
        "src/rack_aware/patterns.py",
        "tests/test_rack_aware.py",
        "config.yaml",
        "cluster.yaml",
    }


def test_the_packages_own_tests_pass_with_the_kit(package: tuple[Path, Path]) -> None:
    root, site = package
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        env=_env(site),
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "3 passed" in completed.stdout


def test_the_patterns_keep_the_contract(
    package: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, site = package
    monkeypatch.syspath_prepend(str(site))
    patterns = importlib.import_module("rack_aware.patterns")
    for cls, point in (
        (patterns.RackRequired, "Filter"),
        (patterns.RackSlots, "Reserve"),
        (patterns.ApprovalGate, "Permit"),
    ):
        assert contract_problems(cls, point) == []


def test_the_package_schedules_in_simulate(package: tuple[Path, Path]) -> None:
    root, site = package
    for command in (
        ["validate-config", "config.yaml"],
        ["simulate", "--config", "config.yaml", "cluster.yaml", "--output", "json"],
    ):
        completed = subprocess.run(
            [sys.executable, "-m", "scheduler.app.cli", *command],
            cwd=root,
            env=_env(site),
            capture_output=True,
            text=True,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
    pods = {p["name"]: p for p in json.loads(completed.stdout)["pods"]}
    assert {p["status"] for p in pods.values()} == {"Scheduled"}
    # Two pods of one app, two empty nodes: RackAware (and the defaults) spread them.
    assert {pods["web-0"]["node"], pods["web-1"]["node"]} == {"a", "b"}
