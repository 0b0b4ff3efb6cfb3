"""Finding the control plane binaries: the script and the harness agree, and no silent skip."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.binaries import BIN_DIR_ENV
from tests.e2e.binaries import BUILD_SCRIPT
from tests.e2e.binaries import CACHE_ENV
from tests.e2e.binaries import binaries_or_skip
from tests.e2e.binaries import default_bin_dir
from tests.e2e.binaries import read_pinned_versions

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("cache_override", [None, "/tmp/somewhere-else"], ids=["xdg", "override"])
def test_script_and_harness_agree_on_bin_dir(
    cache_override: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if cache_override is None:
        monkeypatch.delenv(CACHE_ENV, raising=False)
    else:
        monkeypatch.setenv(CACHE_ENV, cache_override)
    printed = subprocess.run(
        ["bash", str(BUILD_SCRIPT), "--print-bin-dir"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(printed) == default_bin_dir()


def test_pinned_versions_are_exact_releases() -> None:
    pinned = read_pinned_versions()
    assert pinned.kubernetes.startswith("v1.36.")
    assert pinned.etcd.startswith("v3.6.")
    for version in (pinned.kubernetes, pinned.etcd):
        assert all(part.isdigit() for part in version[1:].split(".")), version


@pytest.fixture
def nothing_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, no bin dir override, and a PATH without `go`."""
    monkeypatch.delenv(BIN_DIR_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return tmp_path


def test_without_go_the_suite_is_skipped_loudly(
    nothing_built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)

    with (
        pytest.warns(UserWarning, match="E2E TESTS NOT RUN"),
        pytest.raises(pytest.skip.Exception, match="no Go toolchain"),
    ):
        binaries_or_skip()


def test_without_go_in_ci_the_suite_fails(
    nothing_built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")

    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        binaries_or_skip()


def test_bin_dir_override_must_hold_every_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "etcd").write_text("#!/bin/sh\n")
    (tmp_path / "etcd").chmod(0o755)
    monkeypatch.setenv(BIN_DIR_ENV, str(tmp_path))

    with pytest.raises(pytest.fail.Exception, match=r"lacks kube-apiserver, kube-scheduler$"):
        binaries_or_skip()
