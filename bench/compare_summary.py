"""From raw runs to the summary: medians, medians of ratios to upstream, and the final table.

Repeats are paired by index: repeat i of a scheduler is divided by repeat i of upstream in the
same configuration (mode, load, workload), and the median of those ratios is reported, so that
a noisy moment on the machine moves one pair rather than one side of every ratio.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from bench.compare_schedulers import NULL
from bench.compare_schedulers import NULL_EVENTS
from bench.compare_schedulers import UPSTREAM

DRAIN = "drain"
CHURN = "churn"

Figures = dict[str, float]


@dataclass(frozen=True)
class RunRecord:
    """One run's raw figures and where it belongs."""

    mode: str
    load: str
    workload: str
    scheduler: str
    repeat: int
    nodes: int
    pods: int
    figures: Figures

    @property
    def configuration(self) -> tuple[str, str, str]:
        return (self.mode, self.load, self.workload)


@dataclass(frozen=True)
class Column:
    header: str
    figure: str
    # "value": the median figure; "ratio": median of ratios to upstream; "null" and
    # "null_events": median of ratios to the null scheduler without and with its Scheduled
    # Events; "count": repeats where the figure is 1 out of all repeats.
    kind: str
    digits: int = 2


DRAIN_COLUMNS = (
    Column("pods/s", "throughput", "value", 1),
    Column("x up", "throughput", "ratio"),
    Column("of null", "throughput", "null"),
    Column("of null+ev", "throughput", "null_events"),
    Column("CPU ms/pod", "cpu_ms_per_pod", "value"),
    Column("x up", "cpu_ms_per_pod", "ratio"),
    Column("RSS MiB", "peak_rss_mib", "value", 0),
    Column("x up", "peak_rss_mib", "ratio"),
    Column("1st bind s", "first_bind_s", "value"),
    Column("x up", "first_bind_s", "ratio"),
)
CHURN_COLUMNS = (
    Column("rate/s", "rate", "value", 0),
    Column("kept up", "kept_up", "count"),
    Column("created/s", "created_per_s", "value", 1),
    Column("bound/s", "bound_per_s", "value", 1),
    Column("max backlog", "max_backlog", "value", 0),
    Column("p50 ms", "p50_latency_ms", "value", 0),
    Column("x up", "p50_latency_ms", "ratio"),
    Column("p99 ms", "p99_latency_ms", "value", 0),
    Column("x up", "p99_latency_ms", "ratio"),
    Column("CPU ms/pod", "cpu_ms_per_pod", "value"),
    Column("x up", "cpu_ms_per_pod", "ratio"),
)
COLUMNS = {DRAIN: DRAIN_COLUMNS, CHURN: CHURN_COLUMNS}


def median_of_ratios(numerators: dict[int, float], denominators: dict[int, float]) -> float | None:
    """The median of numerator[i] / denominator[i] over the repeats both have; None if none."""
    ratios = [
        numerators[i] / denominators[i]
        for i in sorted(numerators.keys() & denominators.keys())
        if denominators[i] != 0
    ]
    return statistics.median(ratios) if ratios else None


@dataclass
class SchedulerSummary:
    """One scheduler's medians in one configuration."""

    scheduler: str
    repeats: int
    values: dict[str, float] = field(default_factory=dict)
    ratios: dict[str, float | None] = field(default_factory=dict)
    of_null: dict[str, float | None] = field(default_factory=dict)
    of_null_events: dict[str, float | None] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


# The scheduler each kind of relative column divides by.
_REFERENCE = {"ratio": UPSTREAM, "null": NULL, "null_events": NULL_EVENTS}


def _relative(summary: SchedulerSummary, kind: str) -> dict[str, float | None]:
    if kind == "ratio":
        return summary.ratios
    return summary.of_null if kind == "null" else summary.of_null_events


def _by_repeat(records: Iterable[RunRecord], scheduler: str, figure: str) -> dict[int, float]:
    return {
        r.repeat: r.figures[figure]
        for r in records
        if r.scheduler == scheduler and figure in r.figures
    }


def summarise(records: Sequence[RunRecord], load: str) -> list[SchedulerSummary]:
    """The summary of one configuration's runs (all of one mode, load and workload)."""
    schedulers = list(dict.fromkeys(r.scheduler for r in records))
    summaries = []
    for scheduler in schedulers:
        mine = [r for r in records if r.scheduler == scheduler]
        summary = SchedulerSummary(scheduler, len(mine))
        for column in COLUMNS[load]:
            own = _by_repeat(mine, scheduler, column.figure)
            if not own:
                continue
            if column.kind == "value":
                summary.values[column.figure] = statistics.median(own.values())
            elif column.kind == "count":
                summary.counts[column.figure] = sum(1 for v in own.values() if v == 1.0)
            else:
                theirs = _by_repeat(records, _REFERENCE[column.kind], column.figure)
                _relative(summary, column.kind)[column.figure] = median_of_ratios(own, theirs)
        summaries.append(summary)
    return summaries


def group_by_configuration(
    records: Sequence[RunRecord],
) -> dict[tuple[str, str, str], list[RunRecord]]:
    """Runs by (mode, load, workload), in the order the configurations first ran."""
    groups: dict[tuple[str, str, str], list[RunRecord]] = {}
    for record in records:
        groups.setdefault(record.configuration, []).append(record)
    return groups


def _cell(summary: SchedulerSummary, column: Column) -> str:
    if column.kind == "value":
        value = summary.values.get(column.figure)
        return "-" if value is None else f"{value:.{column.digits}f}"
    if column.kind == "count":
        count = summary.counts.get(column.figure)
        return "-" if count is None else f"{count}/{summary.repeats}"
    ratio = _relative(summary, column.kind).get(column.figure)
    return "-" if ratio is None else f"{ratio:.{column.digits}f}"


def format_table(records: Sequence[RunRecord], load: str) -> str:
    """One row per configuration and scheduler of the given load; empty when none ran."""
    columns = COLUMNS[load]
    head = ["mode", "workload", "scheduler", "runs", *(c.header for c in columns)]
    rows: list[list[str]] = []
    for (mode, row_load, workload), group in group_by_configuration(records).items():
        if row_load != load:
            continue
        for summary in summarise(group, load):
            cells = [_cell(summary, column) for column in columns]
            rows.append([mode, workload, summary.scheduler, str(summary.repeats), *cells])
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    left = 3  # mode, workload and scheduler read best left-aligned

    def line(cells: list[str]) -> str:
        return "  ".join(
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join(line(row) for row in [head, *rows])
