"""Where the e2e tests find kube-apiserver, kube-scheduler and etcd, and how they get built.

The versions are pinned in hack/e2e-versions.env; hack/build-e2e-binaries.sh builds them into a
cache outside the repository. `KUBE_PYSCHEDULER_E2E_BIN_DIR` points at ready-made binaries
instead and disables building.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
VERSIONS_FILE = REPO_ROOT / "hack" / "e2e-versions.env"
BUILD_SCRIPT = REPO_ROOT / "hack" / "build-e2e-binaries.sh"
BIN_DIR_ENV = "KUBE_PYSCHEDULER_E2E_BIN_DIR"
CACHE_ENV = "KUBE_PYSCHEDULER_E2E_CACHE"


class BinariesUnavailableError(RuntimeError):
    """The control plane binaries are missing, or building them failed."""


class GoToolchainMissingError(BinariesUnavailableError):
    """The binaries are not built and there is no `go` to build them with."""


@dataclass(frozen=True)
class PinnedVersions:
    kubernetes: str
    etcd: str


@dataclass(frozen=True)
class ControlPlaneBinaries:
    kube_apiserver: Path
    kube_scheduler: Path
    etcd: Path

    @classmethod
    def in_dir(cls, bin_dir: Path) -> ControlPlaneBinaries:
        return cls(
            kube_apiserver=bin_dir / "kube-apiserver",
            kube_scheduler=bin_dir / "kube-scheduler",
            etcd=bin_dir / "etcd",
        )

    def missing(self) -> list[Path]:
        paths = (self.kube_apiserver, self.kube_scheduler, self.etcd)
        return [path for path in paths if not (path.is_file() and os.access(path, os.X_OK))]


def read_pinned_versions(path: Path = VERSIONS_FILE) -> PinnedVersions:
    """Parses the KEY=VALUE lines the build script sources."""
    values: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"{path}: not a KEY=VALUE line: {raw!r}")
        values[key.strip()] = value.strip()
    return PinnedVersions(kubernetes=values["KUBERNETES_VERSION"], etcd=values["ETCD_VERSION"])


def cache_root() -> Path:
    """The same rule as the build script: explicit override, then the XDG cache directory."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "kube-pyscheduler" / "e2e"


def default_bin_dir(versions: PinnedVersions | None = None) -> Path:
    """The directory where the build script links all three binaries together."""
    pinned = versions or read_pinned_versions()
    return cache_root() / f"bin-{pinned.kubernetes}-{pinned.etcd}"


def configured_bin_dir() -> Path | None:
    """The directory named by KUBE_PYSCHEDULER_E2E_BIN_DIR, if set."""
    explicit = os.environ.get(BIN_DIR_ENV)
    return Path(explicit) if explicit else None


def build_binaries(timeout_s: float = 90 * 60) -> None:
    """Runs the build script; it does nothing when the cached binaries are current."""
    result = subprocess.run(
        ["bash", str(BUILD_SCRIPT)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    if result.returncode != 0:
        tail = "\n".join(result.stderr.splitlines()[-40:])
        raise BinariesUnavailableError(
            f"{BUILD_SCRIPT.name} failed with exit code {result.returncode}:\n{tail}"
        )


def ensure_binaries() -> ControlPlaneBinaries:
    """The binaries from KUBE_PYSCHEDULER_E2E_BIN_DIR, or the cached build, built if missing."""
    explicit = configured_bin_dir()
    if explicit is not None:
        binaries = ControlPlaneBinaries.in_dir(explicit)
        if missing := binaries.missing():
            raise BinariesUnavailableError(f"{BIN_DIR_ENV}={explicit} lacks {_names(missing)}")
        return binaries
    binaries = ControlPlaneBinaries.in_dir(default_bin_dir())
    if not binaries.missing():
        return binaries
    if shutil.which("go") is None:
        raise GoToolchainMissingError(
            "E2E TESTS NOT RUN: kube-apiserver and etcd are not built and there is no Go "
            f"toolchain to build them; run hack/{BUILD_SCRIPT.name} on a machine with Go, "
            f"or point {BIN_DIR_ENV} at ready-made binaries"
        )
    build_binaries()
    if missing := binaries.missing():
        raise BinariesUnavailableError(
            f"{BUILD_SCRIPT.name} succeeded but left out {_names(missing)}"
        )
    return binaries


def binaries_or_skip() -> ControlPlaneBinaries:
    """Locates (building if needed) the binaries; without Go: skip, or fail when CI is set."""
    try:
        return ensure_binaries()
    except GoToolchainMissingError as err:
        if os.environ.get("CI"):
            pytest.fail(f"{err} (CI is set: the e2e suite may not be skipped)", pytrace=False)
        warnings.warn(str(err), stacklevel=1)
        pytest.skip(str(err))
    except BinariesUnavailableError as err:
        pytest.fail(str(err), pytrace=False)


def _names(paths: list[Path]) -> str:
    return ", ".join(path.name for path in paths)
