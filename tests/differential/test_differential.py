"""A fixed-seed slice of the differential run, plus the pinned scenarios of `scenarios/` (shapes
where we once disagreed): every case must agree with kube-scheduler v1.36 on verdict,
FailedScheduling text, preemption nominee and victims, and on the chosen node wherever
upstream's top score is unique. `make differential CASES=N` runs a longer slice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.differential.cases import Case
from tests.differential.cases import generate
from tests.differential.runner import run_cases
from tests.e2e.binaries import ControlPlaneBinaries

pytestmark = pytest.mark.e2e

SEED = 20260
CASES = 60
SCENARIOS = Path(__file__).parent / "scenarios"
# Pinned scenarios run after the generated cases, under indices of their own.
PINNED_FIRST_INDEX = 100_000


def pinned_scenarios() -> list[tuple[int, Case]]:
    paths = sorted(SCENARIOS.glob("*.json"))
    return [
        (PINNED_FIRST_INDEX + i, Case.from_json(json.loads(path.read_text())["case"]))
        for i, path in enumerate(paths)
    ]


def test_fixed_seed_slice_agrees_with_upstream(
    e2e_binaries: ControlPlaneBinaries, tmp_path: Path
) -> None:
    pinned = pinned_scenarios()
    assert pinned, f"no scenarios in {SCENARIOS}"
    cases = [(index, generate(SEED, index)) for index in range(CASES)] + pinned
    tally = run_cases(
        e2e_binaries,
        cases,
        seed=SEED,
        out_dir=tmp_path / "scenarios",
        log_dir=tmp_path / "logs",
        echo=False,
    )
    assert tally.cases == CASES + len(pinned)
    # The slice must exercise what it claims to compare.
    assert tally.unique_top > 0 and tally.unschedulable > 0 and tally.preemptions > 0
    assert tally.device_bound > 0 and tally.device_cases > tally.device_bound
    assert tally.taint_rule_cases > 0
    # At least the pinned case where kube-scheduler v1.36 fails PreBind and we bind.
    assert tally.upstream_faults >= 1
    failures = [path.read_text() for path in tally.disagreements]
    assert not failures, "\n".join(failures)
