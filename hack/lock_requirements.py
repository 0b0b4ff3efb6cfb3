"""Print requirements.lock: kube-pyscheduler's runtime dependencies, pinned.

The project's own requirements come from pyproject.toml, so the lock follows an edit there
even before the project is reinstalled. The rest of the closure comes from the package metadata
of the running environment (`importlib.metadata`): follow each dependency's requirements (and
the extras asked for), keep those whose environment markers hold here, and pin every package to
the version installed. Run it with the interpreter the container image uses (CPython 3.11 on
Linux) so platform markers resolve the same way:

    .venv/bin/python hack/lock_requirements.py > requirements.lock
"""

from __future__ import annotations

import sys
import tomllib
from importlib.metadata import PackageNotFoundError
from importlib.metadata import distribution
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
HEADER = """\
# Runtime dependencies of kube-pyscheduler and everything they pull in, each pinned to one
# version. The container image installs exactly these (see Dockerfile).
# Regenerate after changing dependencies:
#   .venv/bin/python hack/lock_requirements.py > requirements.lock
"""


def _applies(requirement: Requirement, extras: frozenset[str]) -> bool:
    """Whether a requirement holds on this interpreter and platform for the given extras."""
    if requirement.marker is None:
        return True
    # A marker without `extra` ignores the value; one with it must match a requested extra.
    return any(requirement.marker.evaluate({"extra": extra}) for extra in extras | {""})


def project_requirements(pyproject: Path = PYPROJECT) -> list[Requirement]:
    """The runtime dependencies declared in pyproject.toml ([project].dependencies)."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return [Requirement(line) for line in project["dependencies"]]


def runtime_closure(requirements: list[Requirement]) -> dict[str, str]:
    """Canonical package name -> installed version, for `requirements` and all they need."""
    pinned: dict[str, str] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    pending = [
        (canonicalize_name(r.name), frozenset(r.extras))
        for r in requirements
        if _applies(r, frozenset())
    ]
    while pending:
        name, extras = pending.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            dist = distribution(name)
        except PackageNotFoundError as error:
            raise SystemExit(f"{name} is required but not installed: {error}") from error
        pinned[name] = dist.version
        for line in dist.requires or ():
            requirement = Requirement(line)
            if _applies(requirement, extras):
                pending.append((canonicalize_name(requirement.name), frozenset(requirement.extras)))
    return pinned


def render(pinned: dict[str, str]) -> str:
    return HEADER + "".join(f"{name}=={version}\n" for name, version in sorted(pinned.items()))


if __name__ == "__main__":
    sys.stdout.write(render(runtime_closure(project_requirements())))
