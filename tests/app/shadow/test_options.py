"""The flags of `run --shadow`."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.app.cli import build_parser
from scheduler.app.shadow.options import ShadowOptions
from scheduler.framework.errors import ConfigError


def _options(*argv: str) -> ShadowOptions | None:
    return ShadowOptions.from_args(build_parser().parse_args(["run", *argv]))


def test_off_without_the_flag() -> None:
    assert _options() is None


def test_report_and_interval() -> None:
    options = _options("--shadow", "--shadow-report=r.json", "--shadow-report-interval=1m30s")

    assert options == ShadowOptions(report=Path("r.json"), report_interval=90.0)


def test_default_interval() -> None:
    options = _options("--shadow")

    assert options is not None
    assert options.report is None
    assert options.report_interval == 60.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--shadow-report=r.json"], "--shadow-report: only applies with --shadow"),
        (["--shadow-report-interval=5s"], "--shadow-report-interval: only applies with --shadow"),
        (
            ["--shadow", "--shadow-report-interval=soon"],
            '--shadow-report-interval: time: invalid duration "soon"',
        ),
        (["--shadow", "--shadow-report-interval=0s"], "--shadow-report-interval: must be"),
    ],
)
def test_bad_flags_are_named(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _options(*argv)
