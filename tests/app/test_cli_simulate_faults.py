"""`simulate` finishes on every input: a plugin fault is that pod's reported Error."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from scheduler.app.cli import EXIT_POD_ERRORS
from scheduler.app.cli import EXIT_TIMED_OUT
from scheduler.app.cli import main
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.fault_plugin import NAME
from tests.fault_plugin import fault_annotations
from tests.fault_plugin import profile_plugins

# A run that names the plugin must come back well within this on a busy machine.
FINISHES_WITHIN_S = 20.0


def _write_scenario(tmp_path: Path, point: str, kind: str) -> list[str]:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": profile_plugins()}],
    }
    faulty = make_pod("faulty").dict()
    faulty["metadata"]["annotations"] = fault_annotations(point, kind)
    objects = [make_node("n1").dict(), make_node("n2").dict(), faulty, make_pod("fine").dict()]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    return [
        "simulate",
        str(tmp_path / "cluster.yaml"),
        "--config",
        str(tmp_path / "config.yaml"),
        "--plugin",
        "tests.fault_plugin:SPEC",
        "--no-progress",
        "--output",
        "json",
    ]


@pytest.mark.parametrize(
    ("point", "kind"),
    [
        ("PreEnqueue", "raise"),
        ("Filter", "raise"),
        ("Score", "raise"),
        ("Score", "score-150"),
        ("Score", "nan"),
        ("PreBind", "wrong-type"),
    ],
)
def test_a_faulting_plugin_is_reported_as_that_pods_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], point: str, kind: str
) -> None:
    started = time.monotonic()
    code = main(_write_scenario(tmp_path, point, kind))
    assert time.monotonic() - started < FINISHES_WITHIN_S
    captured = capsys.readouterr()
    assert code == EXIT_POD_ERRORS
    assert "1 pod(s) failed with a scheduler or plugin error" in captured.err
    pods = {p["name"]: p for p in json.loads(captured.out)["pods"]}
    assert pods["fine"]["status"] == "Scheduled"
    assert pods["faulty"]["status"] == "Error"
    assert f'"{NAME}"' in pods["faulty"]["message"]


def test_the_wall_clock_bound_stops_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No time at all: the run stops before the first pod is scheduled.
    code = main([*_write_scenario(tmp_path, "Filter", "raise"), "--timeout", "1e-9"])
    assert code == EXIT_TIMED_OUT
    assert "did not finish within --timeout" in capsys.readouterr().err


def test_the_wall_clock_bound_must_be_positive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*_write_scenario(tmp_path, "Filter", "raise"), "--timeout", "0"]) == 2
    assert "--timeout: must be a positive number of seconds" in capsys.readouterr().err
