"""The rollback guard's alert, run by Prometheus' own rule tester (promtool, installed with
Prometheus by .ci/run): it fires for a schedulerName nobody serves once pods have waited the
rule's `for`, and never for names known to be served."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.manifests import MONITORING_DIR

RULE_FILE = MONITORING_DIR / "prometheusrule.yaml"
SUMMARY = "Pods name schedulerName retired, which no running scheduler serves."
DESCRIPTION = (
    "2 pending pod(s) name schedulerName retired; no running scheduler serves it, so they stay "
    "Pending. Deploy that scheduler again, or change the workloads' schedulerName. "
    "`kube-pyscheduler retire-check --scheduler-name retired` lists them."
)


def _promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is missing: install Prometheus (the Debian package `prometheus`)"
    return found


def _unit_tests() -> dict[str, Any]:
    return {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    # Two replicas report the same two stuck pods.
                    {
                        "series": 'scheduler_unserved_pods{scheduler_name="retired",pod="a"}',
                        "values": "0 2x40",
                    },
                    {
                        "series": 'scheduler_unserved_pods{scheduler_name="retired",pod="b"}',
                        "values": "0 2x40",
                    },
                    # Names that are served never alert, whatever a replica counts.
                    {
                        "series": 'scheduler_unserved_pods{scheduler_name="kube-pyscheduler"}',
                        "values": "3x40",
                    },
                    {
                        "series": 'scheduler_unserved_pods{scheduler_name="default-scheduler"}',
                        "values": "3x40",
                    },
                    {
                        "series": 'scheduler_unserved_pods{scheduler_name="emptied"}',
                        "values": "0x40",
                    },
                ],
                "alert_rule_test": [
                    {"eval_time": "10m", "alertname": "PodsNameAnUnservedScheduler"},
                    {
                        "eval_time": "20m",
                        "alertname": "PodsNameAnUnservedScheduler",
                        "exp_alerts": [
                            {
                                "exp_labels": {"severity": "warning", "scheduler_name": "retired"},
                                "exp_annotations": {
                                    "summary": SUMMARY,
                                    "description": DESCRIPTION,
                                },
                            }
                        ],
                    },
                ],
            }
        ],
    }


def test_the_alert_fires_for_unserved_names_only(tmp_path: Path) -> None:
    rule = yaml.safe_load(RULE_FILE.read_text(encoding="utf-8"))
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
    tests = tmp_path / "tests.yaml"
    tests.write_text(yaml.safe_dump(_unit_tests()))

    for argv in (["check", "rules", str(rules)], ["test", "rules", str(tests)]):
        run = subprocess.run(
            [_promtool(), *argv], capture_output=True, text=True, cwd=tmp_path, check=False
        )
        assert run.returncode == 0, run.stdout + run.stderr
