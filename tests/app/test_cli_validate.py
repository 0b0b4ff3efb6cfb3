"""`kube-pyscheduler validate-config`: bad configurations fail naming the field path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler.app.cli import main

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

BAD_CONFIGS = {
    "two-queue-sorts": (
        """
profiles:
  - schedulerName: a
  - schedulerName: b
    plugins:
      queueSort:
        enabled: [{name: DemoSort}]
        disabled: [{name: "*"}]
""",
        "profiles[1].plugins.queueSort",
    ),
    "unknown-plugin": (
        """
profiles:
  - schedulerName: a
    plugins:
      filter:
        enabled: [{name: NoSuchPlugin}]
""",
        "profiles[0].plugins.filter.enabled[0]",
    ),
    "wrong-extension-point": (
        """
profiles:
  - schedulerName: a
    plugins:
      bind:
        enabled: [{name: NodeResourcesFit}]
""",
        "profiles[0].plugins.bind.enabled[0]",
    ),
    "duplicate-scheduler-names": (
        """
profiles:
  - schedulerName: same
  - schedulerName: same
""",
        "profiles[1].schedulerName",
    ),
    "args-of-the-wrong-type": (
        """
profiles:
  - schedulerName: a
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: Sometimes
""",
        "profiles[0].pluginConfig[0].args.scoringStrategy.type",
    ),
    "number-as-string": (
        """
profiles:
  - schedulerName: a
    pluginConfig:
      - name: InterPodAffinity
        args:
          hardPodAffinityWeight: "heavy"
""",
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config_is_rejected_with_its_field_path(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body, field_path = BAD_CONFIGS[case]
    config = tmp_path / "config.yaml"
    config.write_text(HEADER + body)
    plugin = "tests.app.demo_sort:SPEC" if "DemoSort" in body else None
    argv = ["validate-config", str(config)] + (["--plugin", plugin] if plugin else [])
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert field_path in err, err


def test_valid_config_and_effective_dump(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(HEADER + "profiles:\n  - schedulerName: mine\n")
    effective = tmp_path / "effective.yaml"
    assert main(["validate-config", str(config), "--write-config-to", str(effective)]) == 0
    assert "valid (1 profile(s): mine)" in capsys.readouterr().out
    dumped = yaml.safe_load(effective.read_text())
    assert dumped["profiles"][0]["schedulerName"] == "mine"
    # Upstream's defaults are filled in, e.g. the backoff bounds and leader election.
    assert dumped["podInitialBackoffSeconds"] == 1
    assert dumped["podMaxBackoffSeconds"] == 10
    assert dumped["leaderElection"]["leaseDuration"] == "15s"
    # And the dump is itself a valid configuration.
    assert main(["validate-config", str(effective)]) == 0


def test_unreadable_yaml_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(HEADER + "profiles:\n  - schedulerName: [unclosed\n")
    assert main(["validate-config", str(config)]) != 0
    assert "config.yaml:" in capsys.readouterr().err


def test_feature_gates_decide_what_plugin_args_may_say(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    shape = "[{utilization: 0, score: 0}, {utilization: 100, score: 10}]"
    config.write_text(
        HEADER + "profiles:\n  - schedulerName: s\n    pluginConfig:\n"
        f"      - name: VolumeBinding\n        args: {{shape: {shape}}}\n"
    )
    assert main(["validate-config", str(config)]) != 0
    assert "turn on the feature gate StorageCapacityScoring" in capsys.readouterr().err

    effective = tmp_path / "effective.yaml"
    gates = "--feature-gates=StorageCapacityScoring=true"
    assert main(["validate-config", str(config), gates, "--write-config-to", str(effective)]) == 0
    entries = yaml.safe_load(effective.read_text())["profiles"][0]["pluginConfig"]
    [entry] = [e for e in entries if e["name"] == "VolumeBinding"]
    assert entry["args"]["shape"] == [
        {"utilization": 0, "score": 0},
        {"utilization": 100, "score": 10},
    ]
