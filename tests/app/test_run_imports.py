"""`run` starts without the code of the other commands: in a fresh interpreter, parsing `run`'s
flags, loading its configuration and plugins and importing the daemon leave the modules of
`simulate` and `explain` unimported, and so are the CEL library (needed only once a device
selector is compiled) and rich (the terminal output of those commands)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

NOT_FOR_RUN = (
    "scheduler.app.simulation",
    "scheduler.app.simulate_command",
    "scheduler.app.report",
    "scheduler.app.html_report",
    "scheduler.app.outcomes",
    "scheduler.app.scenario",
    "scheduler.app.workloads",
    "scheduler.app.progress",
    "scheduler.app.gangs",
    "scheduler.app.dra_scenario",
    "scheduler.app.explain",
    "scheduler.core.explain",
    "scheduler.cluster.sim",
    "scheduler.app.shadow.daemon",
    "celpy",
    "rich",
)

PROBE = """
import sys
from scheduler.app.cli import main

assert main(["run", "--config", sys.argv[1], "--write-config-to", sys.argv[2]]) == 0
import scheduler.app.serve

loaded = sorted(m for m in sys.modules if m.startswith(tuple(sys.argv[3:])))
print("\\n".join(loaded))
"""


def imported_by_run(tmp_path: Path, prefixes: tuple[str, ...]) -> list[str]:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    effective = tmp_path / "effective.yaml"
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(config), str(effective), *prefixes],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    # The configuration was really loaded (its plugins included), not refused early.
    assert "DynamicResources" in effective.read_text()
    return probe.stdout.split()


def test_run_imports_none_of_the_other_commands_modules(tmp_path: Path) -> None:
    assert imported_by_run(tmp_path, NOT_FOR_RUN) == []


def test_the_probe_sees_what_run_does_import(tmp_path: Path) -> None:
    # The same probe names modules `run` needs, so an empty answer above means something.
    loaded = imported_by_run(tmp_path, ("scheduler.app.daemon", "plugins.dynamic_resources"))
    assert "scheduler.app.daemon" in loaded
    assert "plugins.dynamic_resources.selectors" in loaded
