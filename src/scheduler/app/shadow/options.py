"""The flags of `run --shadow`."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from scheduler.app.flag_kinds import flag_duration
from scheduler.framework.errors import ConfigError

DEFAULT_REPORT_INTERVAL = "60s"


@dataclass(frozen=True, slots=True)
class ShadowOptions:
    report: Path | None
    report_interval: float

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ShadowOptions | None:
        """None unless `--shadow` was given; the report flags alone are an error."""
        if not args.shadow:
            for flag, value in (
                ("--shadow-report", args.shadow_report),
                ("--shadow-report-interval", args.shadow_report_interval),
            ):
                if value is not None:
                    raise ConfigError(f"{flag}: only applies with --shadow")
            return None
        text = args.shadow_report_interval or DEFAULT_REPORT_INTERVAL
        interval = flag_duration("--shadow-report-interval", text)
        if not interval > 0:
            raise ConfigError(f"--shadow-report-interval: must be positive, got {text!r}")
        return cls(report=args.shadow_report, report_interval=interval)


def add_shadow_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "shadow mode",
        "Trial a configuration beside the production scheduler: watch the pods of the "
        "configured schedulerNames, decide where each would go, bind nothing, and compare "
        "with the node each pod was actually bound to.",
    )
    group.add_argument(
        "--shadow",
        action="store_true",
        help="decide but never bind or write anything; no leader election",
    )
    group.add_argument(
        "--shadow-report",
        type=Path,
        metavar="FILE",
        help="write the comparison as JSON to FILE, periodically and at exit",
    )
    group.add_argument(
        "--shadow-report-interval",
        metavar="DURATION",
        help=f"how often to rewrite --shadow-report (default {DEFAULT_REPORT_INTERVAL})",
    )
