"""A fixed-seed slice of the differential run: every case must agree with kube-scheduler v1.36
on verdict, FailedScheduling text, preemption nominee and victims, and on the chosen node
wherever upstream's top score is unique. `make differential CASES=N` runs a longer slice."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.differential.cases import generate
from tests.differential.runner import run_cases
from tests.e2e.binaries import ControlPlaneBinaries

pytestmark = pytest.mark.e2e

SEED = 20260
CASES = 60


def test_fixed_seed_slice_agrees_with_upstream(
    e2e_binaries: ControlPlaneBinaries, tmp_path: Path
) -> None:
    cases = [(index, generate(SEED, index)) for index in range(CASES)]
    tally = run_cases(
        e2e_binaries,
        cases,
        seed=SEED,
        out_dir=tmp_path / "scenarios",
        log_dir=tmp_path / "logs",
        echo=False,
    )
    assert tally.cases == CASES
    # The slice must exercise what it claims to compare.
    assert tally.unique_top > 0 and tally.unschedulable > 0 and tally.preemptions > 0
    failures = [path.read_text() for path in tally.disagreements]
    assert not failures, "\n".join(failures)
