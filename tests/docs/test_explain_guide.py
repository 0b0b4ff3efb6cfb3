"""docs/explain.md shows what `explain` really prints for the example scenario."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scheduler.app.cli import main

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
