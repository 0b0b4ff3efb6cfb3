"""The profiler drives `bench.compare` with arguments it accepts, for one run of ours alone."""

from __future__ import annotations

from pathlib import Path

from bench.compare import parse_args
from bench.profile_daemon import compare_argv
from bench.profile_daemon import top_entries


def test_compare_accepts_the_profilers_arguments(tmp_path: Path) -> None:
    args = parse_args(compare_argv(5000, 10000, tmp_path))
    assert args.schedulers == ["ours"]
    assert (args.repeat, args.modes, args.loads, args.workloads) == (
        1,
        ["defaults"],
        ["drain"],
        ["basic"],
    )
    assert (args.nodes, args.pods) == (5000, 10000)
    assert args.json == tmp_path / "bench.json"
    assert args.log_dir == tmp_path / "logs"


def test_top_entries_count_own_and_inclusive_samples(tmp_path: Path) -> None:
    raw = tmp_path / "profile.raw"
    raw.write_text(
        "process 1;thread 2;main (x/src/a.py:1);decode (x/src/b.py:7) 3\n"
        "process 1;thread 2;main (x/src/a.py:2) 1\n"
    )
    own, inclusive = top_entries(raw, 2)
    assert own == [" 75.0%  decode (b.py)", " 25.0%  main (a.py)"]
    assert inclusive == ["100.0%  main (a.py)", " 75.0%  decode (b.py)"]
