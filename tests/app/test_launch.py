"""The executable holds the collector while the command's modules import, and every command
but `run` (whose daemon keeps it until its caches have synced) collects again as it starts."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from scheduler.app import cli
from scheduler.app.startup_gc import START_UP

# Records, in a fresh interpreter, whether collection was on when the configuration module was
# imported (through the executable's entry point) and when the command finished.
PROBE = """
import gc
import importlib.abc
import sys

seen = []


class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "scheduler.app.configuration":
            seen.append(gc.isenabled())
        return None


sys.meta_path.insert(0, Watch())
sys.argv = ["kube-pyscheduler", "validate-config", sys.argv[1]]
from scheduler.app.launch import main

code = main()
print(code, seen, gc.isenabled())
"""


def test_imports_run_with_collection_held_and_it_is_back_for_the_command(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(config)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    *_, last = probe.stdout.splitlines()
    assert last == "0 [False] True"


def test_other_commands_collect_while_they_run() -> None:
    START_UP.hold()
    try:
        assert not gc.isenabled()
        # Bad input, yet parsed as a command: the hold ends before the command runs.
        assert cli.main(["validate-config", "/nonexistent/config.yaml"]) != 0
        assert gc.isenabled()
    finally:
        START_UP.release(freeze=False)
