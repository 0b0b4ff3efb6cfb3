"""The chaos run of tests/e2e/chaos.py against our daemon, judged from the apiserver's view.

200 nodes that each fit exactly 12 pods, two replicas with upstream's leader election timings,
2,400 pods in one burst. Three times over, with the Lease holder SIGKILLed twice and the
apiserver restarted once: no node over capacity, no Binding outside its author's tenure, every
bound pod with exactly one Scheduled Event (the last second before a SIGKILL excepted),
failover within leaseDuration + retryPeriod + slack. Without any strike: one leader until the
last bind, and every Event.

`python -m tests.e2e.chaos --scheduler upstream` runs the same against kube-scheduler.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.chaos import ChaosPlan
from tests.e2e.chaos import run_chaos
from tests.e2e.chaos import violations

pytestmark = pytest.mark.e2e


def _run(plan: ChaosPlan, binaries: ControlPlaneBinaries, log_dir: Path) -> None:
    report = run_chaos(plan, binaries, log_dir)
    print(report.format())
    assert violations(plan, report) == [], f"{report.format()}\nlogs in {log_dir}"


# Three runs in a row, each on a fresh control plane: a property that holds by luck in one run
# of the interleaving rarely holds in three.
@pytest.mark.parametrize("run", [1, 2, 3])
def test_two_holder_kills_and_an_apiserver_restart_never_double_book_or_lose_an_event(
    run: int, e2e_binaries: ControlPlaneBinaries, tmp_path: Path
) -> None:
    _run(ChaosPlan(kills=2, apiserver_restart=True), e2e_binaries, tmp_path / f"chaos-{run}")


def test_a_burst_without_strikes_has_one_leader_and_every_scheduled_event(
    e2e_binaries: ControlPlaneBinaries, tmp_path: Path
) -> None:
    _run(ChaosPlan(kills=0, apiserver_restart=False), e2e_binaries, tmp_path / "burst")
