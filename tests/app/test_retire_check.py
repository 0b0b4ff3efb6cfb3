"""`retire-check`'s table and exit code, and the names it accepts."""

from __future__ import annotations

import io

import pytest

from scheduler.app.cli import main
from scheduler.app.retire_check import EXIT_PODS_REMAIN
from scheduler.app.retire_check import report_pods_naming


def test_no_pod_means_it_can_go() -> None:
    out = io.StringIO()

    assert report_pods_naming([], "old", out) == 0
    assert out.getvalue() == "No pod names schedulerName 'old': it can be removed.\n"


def test_remaining_pods_are_listed_and_fail_the_check() -> None:
    pods = [
        {"metadata": {"namespace": "a", "name": "web-1"}, "status": {"phase": "Pending"}},
        {
            "metadata": {"namespace": "batch", "name": "job-xyz"},
            "spec": {"nodeName": "node-7"},
            "status": {"phase": "Succeeded"},
        },
    ]
    out = io.StringIO()

    assert report_pods_naming(pods, "old", out) == EXIT_PODS_REMAIN
    assert out.getvalue().splitlines() == [
        "NAMESPACE   NAME      PHASE       NODE",
        "a           web-1     Pending     <none>",
        "batch       job-xyz   Succeeded   node-7",
        "2 pod(s) still name schedulerName 'old': do not remove it yet.",
    ]


@pytest.mark.parametrize("name", ["", "Upper", "has space", "a,b", "x=y"])
def test_a_bad_scheduler_name_is_refused_by_name(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["retire-check", "--scheduler-name", name]) == 2
    assert "--scheduler-name" in capsys.readouterr().err
