"""docs/explain.md shows what `explain` really prints for the example scenario, and every
field of its JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from scheduler.app.cli import main
from scheduler.core.explain.model import Companion
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.model import PermitReport
from scheduler.core.explain.model import Reported
from scheduler.core.explain.model import Verdict

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "explain.md"


def test_the_guide_shows_the_real_output(capsys: pytest.CaptureFixture[str]) -> None:
    [shown] = re.findall(r"^```text\n(.*?)^```$", GUIDE.read_text(), re.MULTILINE | re.DOTALL)
    scenario = str(ROOT / "examples" / "explain" / "pending-pod.yaml")
    assert main(["explain", "default/web", "--scenario", scenario, "--seed", "42"]) == 0
    printed = {line.rstrip() for line in capsys.readouterr().out.splitlines()}
    # Rule and padding widths aside, every line of the guide's example is printed.
    lines = [line.rstrip() for line in shown.splitlines() if line.strip() and "───" not in line]
    missing = [line for line in lines if line not in printed]
    assert not missing, missing


def _documented_schema() -> dict[str, Any]:
    [block] = re.findall(r"^```jsonc\n(.*?)^```$", GUIDE.read_text(), re.MULTILINE | re.DOTALL)
    without_comments = re.sub(r"\s//[^\n]*", "", block)
    return dict(json.loads(without_comments))


def _explained(pod: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    scenario = str(ROOT / "examples" / "explain" / "pending-pod.yaml")
    assert main(["explain", pod, "--scenario", scenario, "-o", "json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_the_guide_documents_every_field_of_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    documented = _documented_schema()
    pending = _explained("default/web", capsys)
    bound = _explained("default/batch-a", capsys)
    assert list(documented) == list(pending)
    for field in ("nodes", "postFilter", "fixes"):
        assert set(documented[field][0]) == set(pending[field][0]), field
    assert set(documented["scores"][0]) == set(bound["scores"][0])
    assert set(documented["permit"]) == set(bound["permit"])
    permit = Explanation("p", "x", "Schedulable", "")
    permit.permit = PermitReport("n", "Rejected", plugins=[Verdict("P", "Wait")])
    permit.permit.companions = [Companion("ns/p", "Unschedulable", "", "m")]
    permit.reported = Reported("False", "Unschedulable", "m", "t")
    shown = permit.to_json()
    assert set(documented["permit"]["plugins"][0]) == set(shown["permit"]["plugins"][0])
    assert set(documented["permit"]["companions"][0]) == set(shown["permit"]["companions"][0])
    assert set(documented["podScheduled"]) == set(shown["podScheduled"])
