"""The container image, checked by reading Dockerfile, .dockerignore and requirements.lock.

Images are not built in the test suite; these checks hold the properties the Deployment relies
on (non-root user, read-only root file system, the `run` command) and that the image installs
exactly the locked dependencies.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError
from importlib.metadata import distribution

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deploy.manifests import REPO_ROOT

DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"
LOCK = REPO_ROOT / "requirements.lock"
PYPROJECT = REPO_ROOT / "pyproject.toml"
NON_ROOT_UID = "65532"
PINNED = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)$")


@dataclass(frozen=True)
class Instruction:
    keyword: str
    argument: str


def parse_dockerfile(text: str) -> list[list[Instruction]]:
    """The instructions of each build stage (before the first FROM: index 0, the global ARGs)."""
    stages: list[list[Instruction]] = [[]]
    logical = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not logical and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            logical += line[:-1].rstrip() + " "
            continue
        logical += line
        keyword, _, argument = logical.partition(" ")
        instruction = Instruction(keyword.upper(), argument.strip())
        if instruction.keyword == "FROM":
            stages.append([])
        stages[-1].append(instruction)
        logical = ""
    return stages


def lock_pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        match = PINNED.match(line)
        assert match, f"requirements.lock: {line!r} is not pinned as name==version"
        name = canonicalize_name(match["name"])
        assert name not in pins, f"requirements.lock: {name} twice"
        pins[name] = match["version"]
    return pins


def runtime_requirements() -> list[Requirement]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    return [Requirement(r) for r in project["dependencies"]]


@pytest.fixture(scope="module")
def stages() -> list[list[Instruction]]:
    return parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def final(stages: list[list[Instruction]]) -> list[Instruction]:
    return stages[-1]


def _args(stage: list[Instruction], keyword: str) -> list[str]:
    return [i.argument for i in stage if i.keyword == keyword]


def test_parser_reads_continued_lines_and_stages() -> None:
    text = "ARG A=1\n# note\nFROM a AS b\nRUN x \\\n  # inside\n  && y\nFROM b\nUSER 1\n"
    assert parse_dockerfile(text) == [
        [Instruction("ARG", "A=1")],
        [Instruction("FROM", "a AS b"), Instruction("RUN", "x && y")],
        [Instruction("FROM", "b"), Instruction("USER", "1")],
    ]


def test_build_is_multi_stage_on_python_3_11_slim(stages: list[list[Instruction]]) -> None:
    assert len(stages) >= 3, "global ARGs, a build stage and the final stage"
    base_arg = next(a for a in _args(stages[0], "ARG") if a.startswith("PYTHON_IMAGE="))
    assert base_arg == "PYTHON_IMAGE=python:3.11-slim"
    # Both stages on the same base: the venv's interpreter path must exist in the final image.
    assert {s[0].argument.split()[0] for s in stages[1:]} == {"${PYTHON_IMAGE}"}


def test_final_stage_runs_as_the_numeric_non_root_user(final: list[Instruction]) -> None:
    users = _args(final, "USER")
    assert users, "the final stage must set USER"
    # Numeric, so the kubelet can check runAsNonRoot without reading /etc/passwd.
    assert users[-1] in {NON_ROOT_UID, f"{NON_ROOT_UID}:{NON_ROOT_UID}"}
    last_user = max(i for i, ins in enumerate(final) if ins.keyword == "USER")
    assert all(ins.keyword != "RUN" for ins in final[last_user:]), "nothing runs as root after"


def test_final_stage_is_read_only_friendly_and_starts_the_daemon(
    final: list[Instruction],
) -> None:
    env = " ".join(_args(final, "ENV"))
    assert "PYTHONDONTWRITEBYTECODE=1" in env
    assert json.loads(_args(final, "ENTRYPOINT")[-1]) == ["kube-pyscheduler"]
    assert json.loads(_args(final, "CMD")[-1]) == ["run"]
    assert "10259" in _args(final, "EXPOSE")
    scripts = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["scripts"]
    assert "kube-pyscheduler" in scripts


def test_final_stage_installs_nothing(final: list[Instruction]) -> None:
    # Build tools stay in the build stage: the final one only copies the finished venv.
    for command in _args(final, "RUN"):
        assert not re.search(r"\b(pip|apt-get|apt|apk)\b.*\binstall\b", command), command
    copies = _args(final, "COPY")
    assert copies == ["--from=build /opt/venv /opt/venv"]


def test_build_stage_installs_the_lock_and_nothing_unpinned(
    stages: list[list[Instruction]],
) -> None:
    build = stages[1]
    assert build[0].argument.endswith(" AS build")
    assert any(c.split()[0] == "requirements.lock" for c in _args(build, "COPY"))
    installs = [
        part
        for command in _args(build, "RUN")
        for part in command.split("&&")
        if "/opt/venv/bin/pip install" in part
    ]
    assert any(re.search(r"(-r|--requirement)[ =]requirements\.lock\b", p) for p in installs)
    # --no-deps everywhere: pip never resolves a version the lock did not choose.
    assert installs and all("--no-deps" in p for p in installs)
    assert any("pip check" in c for c in _args(build, "RUN"))


def test_build_context_holds_what_the_dockerfile_copies(stages: list[list[Instruction]]) -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert patterns[0] == "*", "an allow-list: everything else stays out of the context"
    allowed = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    for stage in stages[1:]:
        for copy in _args(stage, "COPY"):
            if copy.startswith("--from="):
                continue
            *sources, _destination = copy.split()
            assert set(sources) <= allowed, copy
            assert all((REPO_ROOT / source).exists() for source in sources), copy


def test_every_lock_line_is_pinned_and_unique() -> None:
    assert len(lock_pins()) >= len(runtime_requirements())


@pytest.mark.parametrize("requirement", runtime_requirements(), ids=str)
def test_lock_satisfies_each_runtime_dependency(requirement: Requirement) -> None:
    pins = lock_pins()
    name = canonicalize_name(requirement.name)
    assert name in pins, f"{name} is a runtime dependency but not locked"
    assert requirement.specifier.contains(pins[name], prereleases=True)


def test_lock_has_no_test_tools() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    test_extra = {
        canonicalize_name(Requirement(r).name) for r in project["optional-dependencies"]["test"]
    }
    # A package the daemon needs as well (e.g. for certificates) belongs in the lock.
    runtime = {canonicalize_name(r.name) for r in runtime_requirements()}
    assert not (test_extra - runtime) & set(lock_pins())


def test_lock_is_closed_under_the_requirements_of_its_packages() -> None:
    """Each locked package's own runtime requirements are locked too (checked for the packages
    installed here at the locked version; their metadata is what the lock was built from)."""
    pins = lock_pins()
    checked = 0
    for name, version in pins.items():
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue
        if dist.version != version:
            continue
        checked += 1
        for line in dist.requires or ():
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                assert canonicalize_name(requirement.name) in pins, f"{name} needs {line}"
    assert checked, "no locked package is installed at its locked version"
