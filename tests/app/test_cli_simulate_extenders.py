"""`simulate` with an HTTP extender configured: every pod waits for the extender's answers,
and the run ends only once the last one has them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scheduler.app.cli import main
from tests.extender_server import ExtenderBehaviour
from tests.extender_server import extender_config
from tests.extender_server import running_extender


def test_simulate_consults_the_extender_for_every_pod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    with running_extender(ExtenderBehaviour(reject={"node-0"})) as extender:
        config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "extenders": [extender_config(extender.url, prioritize_weight=1)],
                }
            )
        )
        argv = ["simulate", f"--config={config}", "--nodes=3", "--pods=6", "--no-progress"]
        assert main([*argv, "--output=json", "--seed=3"]) == 0
    result = json.loads(capsys.readouterr().out)
    placed = {p["name"]: p["node"] for p in result["pods"]}
    assert len(placed) == 6
    assert set(placed.values()) == {"node-1", "node-2"}
    assert extender.verbs() == ["filter", "prioritize"] * 6
