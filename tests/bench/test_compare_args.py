"""The benchmark's command line: subsets by name, and clear errors for bad values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.compare import parse_args
from bench.compare_schedulers import KINDS
from bench.compare_schedulers import SchedulerProcess


def test_defaults_run_everything_three_times() -> None:
    args = parse_args([])
    assert args.repeat == 3
    assert args.modes == ["defaults", "equal"]
    assert args.loads == ["drain", "churn"]
    assert args.workloads == ["basic", "spreading", "antiaffinity"]
    assert args.schedulers == ["upstream", "ours", "null"]


def test_subsets_keep_the_order_given_and_drop_repeats() -> None:
    args = parse_args(["--workloads", "antiaffinity,basic,basic", "--schedulers", "ours"])
    assert args.workloads == ["antiaffinity", "basic"]
    assert args.schedulers == ["ours"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--modes", "fast"], "--modes: fast is not one of defaults, equal"),
        (["--loads", ","], "--loads: nothing is not one of drain, churn"),
        (["--repeat", "0"], "--repeat must be at least 1"),
        (["--rate", "0"], "--rate must be positive"),
        (["--nodes", "1", "--pods", "111"], "--pods: more pods than the nodes can hold"),
    ],
)
def test_bad_values_name_their_flag(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse_args(argv)
    assert named in capsys.readouterr().err


@pytest.mark.parametrize("leader_elect", [False, True])
def test_leader_election_is_off_unless_asked_and_then_on_for_both(
    tmp_path: Path, leader_elect: bool
) -> None:
    args = parse_args(["--leader-elect"] if leader_elect else [])
    assert args.leader_elect is leader_elect
    for kind in KINDS:
        process = SchedulerProcess(
            kind,
            Path("kube-scheduler"),
            tmp_path / "kubeconfig",
            tmp_path,
            leader_elect=leader_elect,
        )
        config = json.loads((tmp_path / f"{kind.label}-config.yaml").read_text())
        assert config["leaderElection"] == {"leaderElect": leader_elect}
        # Ours takes the flag too, which would override the file.
        flags = [a for a in process.argv if a.startswith("--leader-elect")]
        assert flags in ([], [f"--leader-elect={str(leader_elect).lower()}"])
