"""The configuration kube-scheduler v1.36 writes with `--write-config-to` is one we accept, and
its default profile is ours: the same plugins, in the same order, with the same weights."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scheduler.config import load_config_text
from scheduler.config.defaults import UPSTREAM_DEFAULT_PLUGINS
from scheduler.config.yaml_text import safe_load
from scheduler.runtime.discovery import PluginRegistry
from tests.e2e.binaries import ControlPlaneBinaries

pytestmark = pytest.mark.e2e


def test_kube_schedulers_written_default_config_is_valid_and_matches_our_defaults(
    e2e_binaries: ControlPlaneBinaries, tmp_path: Path
) -> None:
    written = tmp_path / "kube-scheduler.yaml"
    # --master only has to parse: writing the configuration exits before any connection.
    subprocess.run(
        [
            str(e2e_binaries.kube_scheduler),
            "--master=https://127.0.0.1:1",
            f"--write-config-to={written}",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    text = written.read_text()

    config, [profile] = load_config_text(text, PluginRegistry.discover(), source=written.name)

    [upstream_profile] = safe_load(text)["profiles"]
    upstream_defaults = [
        (plugin["name"], plugin.get("weight") or None)
        for plugin in upstream_profile["plugins"]["multiPoint"]["enabled"]
    ]
    assert upstream_defaults == list(UPSTREAM_DEFAULT_PLUGINS)
    assert profile.scheduler_name == "default-scheduler"
    assert [ref.name for ref in profile.plugins["Filter"]][-1] == "NodeDeclaredFeatures"
    assert config.enable_profiling is True
