"""The benchmark's summary: medians of paired ratios and the printed table."""

from __future__ import annotations

import pytest

from bench.compare_schedulers import NULL
from bench.compare_schedulers import NULL_EVENTS
from bench.compare_schedulers import OURS
from bench.compare_schedulers import UPSTREAM
from bench.compare_summary import CHURN
from bench.compare_summary import DRAIN
from bench.compare_summary import RunRecord
from bench.compare_summary import format_table
from bench.compare_summary import median_of_ratios
from bench.compare_summary import summarise


def drain(scheduler: str, repeat: int, throughput: float, cpu: float = 1.0) -> RunRecord:
    figures = {
        "throughput": throughput,
        "cpu_ms_per_pod": cpu,
        "peak_rss_mib": 100.0,
        "first_bind_s": 1.0,
    }
    return RunRecord("defaults", DRAIN, "SchedulingBasic", scheduler, repeat, 10, 20, figures)


def test_median_of_ratios_pairs_repeats_by_index() -> None:
    # Pairwise ratios are 2, 4 and 1: the median is 2. Medians of each side (30 / 10) would
    # say 3.
    ours = {0: 20.0, 1: 40.0, 2: 30.0}
    upstream = {0: 10.0, 1: 10.0, 2: 30.0}
    assert median_of_ratios(ours, upstream) == 2.0


def test_median_of_ratios_skips_unpaired_and_zero_repeats() -> None:
    assert median_of_ratios({0: 5.0, 1: 9.0, 2: 8.0}, {0: 0.0, 2: 4.0}) == 2.0
    assert median_of_ratios({0: 1.0}, {1: 1.0}) is None


def test_even_number_of_ratios_takes_the_middle_mean() -> None:
    assert median_of_ratios({0: 1.0, 1: 3.0}, {0: 1.0, 1: 1.0}) == 2.0


def test_summary_gives_medians_ratios_to_upstream_and_to_null() -> None:
    records = [
        drain(UPSTREAM, 0, 100.0, cpu=4.0),
        drain(UPSTREAM, 1, 200.0, cpu=4.0),
        drain(UPSTREAM, 2, 100.0, cpu=2.0),
        drain(OURS, 0, 150.0, cpu=2.0),
        drain(OURS, 1, 200.0, cpu=2.0),
        drain(OURS, 2, 300.0, cpu=2.0),
        drain(NULL, 0, 300.0),
        drain(NULL, 1, 400.0),
        drain(NULL, 2, 600.0),
    ]
    by_name = {s.scheduler: s for s in summarise(records, DRAIN)}
    ours = by_name[OURS]
    assert ours.repeats == 3
    assert ours.values["throughput"] == 200.0
    assert ours.ratios["throughput"] == 1.5  # 1.5, 1.0, 3.0
    assert ours.ratios["cpu_ms_per_pod"] == 0.5  # 0.5, 0.5, 1.0
    assert ours.of_null["throughput"] == 0.5  # 0.5, 0.5, 0.5
    assert by_name[UPSTREAM].ratios["throughput"] == 1.0


def test_ratio_to_the_null_scheduler_with_events_is_its_own_column() -> None:
    records = [
        drain(OURS, 0, 150.0),
        drain(NULL, 0, 600.0),
        drain(NULL_EVENTS, 0, 300.0),
    ]
    by_name = {s.scheduler: s for s in summarise(records, DRAIN)}
    assert by_name[OURS].of_null["throughput"] == 0.25
    assert by_name[OURS].of_null_events["throughput"] == 0.5
    assert "of null+ev" in format_table(records, DRAIN)
    # Without a run of it, the column says so rather than borrowing another reference.
    alone = summarise([drain(OURS, 0, 150.0), drain(NULL, 0, 600.0)], DRAIN)
    assert alone[0].of_null_events["throughput"] is None


def test_churn_summary_counts_the_repeats_that_kept_up() -> None:
    def churn(scheduler: str, repeat: int, kept_up: float, p99: float) -> RunRecord:
        figures = {"rate": 50.0, "kept_up": kept_up, "p99_latency_ms": p99}
        return RunRecord("defaults", CHURN, "SchedulingBasic", scheduler, repeat, 10, 20, figures)

    records = [
        churn(UPSTREAM, 0, 1.0, 100.0),
        churn(UPSTREAM, 1, 0.0, 200.0),
        churn(OURS, 0, 1.0, 50.0),
        churn(OURS, 1, 1.0, 50.0),
    ]
    by_name = {s.scheduler: s for s in summarise(records, CHURN)}
    assert by_name[UPSTREAM].counts["kept_up"] == 1
    assert by_name[OURS].counts["kept_up"] == 2
    assert by_name[OURS].ratios["p99_latency_ms"] == pytest.approx(0.375)  # 0.5 and 0.25


def test_table_has_a_row_per_scheduler_and_dashes_for_missing_figures() -> None:
    records = [drain(UPSTREAM, 0, 100.0), drain(OURS, 0, 250.0)]
    table = format_table(records, DRAIN).splitlines()
    assert table[0].split()[:4] == ["mode", "workload", "scheduler", "runs"]
    assert len(table) == 3
    ours = table[2].split()
    assert ours[:4] == ["defaults", "SchedulingBasic", OURS, "1"]
    assert ours[4:7] == ["250.0", "2.50", "-"]  # pods/s, x upstream, no null run
    # Every row is as wide as the header: the columns line up.
    assert len({len(line) for line in table}) == 1


def test_table_of_a_load_that_did_not_run_is_empty() -> None:
    assert format_table([drain(UPSTREAM, 0, 100.0)], CHURN) == ""
