"""The shadow tally: verdict counts, the metric, and the JSON report."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from prometheus_client import CollectorRegistry

from scheduler.app.shadow.tally import ShadowTally
from scheduler.app.shadow.tally import write_report
from scheduler.app.shadow.verdict import Comparison
from scheduler.app.shadow.verdict import Verdict

NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)


def _comparison(pod: str, verdict: Verdict, plugin: str = "") -> Comparison:
    return Comparison(pod, "prod", "n1", verdict, ("n2",), plugin, "why")


def test_counts_metric_and_report_agree(tmp_path: Path) -> None:
    registry = CollectorRegistry()
    tally = ShadowTally(registry, differing_kept=2)
    for comparison in (
        _comparison("ns/a", Verdict.SAME_NODE),
        _comparison("ns/b", Verdict.TIED_BEST),
        _comparison("ns/c", Verdict.FILTERED, "NodeAffinity"),
        _comparison("ns/d", Verdict.LOWER_SCORE),
        _comparison("ns/e", Verdict.FILTERED, "NodeAffinity"),
    ):
        tally.record(comparison)

    report = tally.report(NOW)
    path = tmp_path / "report.json"
    write_report(path, report)

    assert json.loads(path.read_text()) == report
    assert report["generatedAt"] == "2026-01-02T03:04:05+00:00"
    assert (report["compared"], report["agreed"], report["differed"]) == (5, 2, 3)
    assert report["byVerdict"]["filtered"] == 2
    assert report["filteredByPlugin"] == {"NodeAffinity": 2}
    # Only the latest two differing pods are listed; the third is counted.
    assert [d["pod"] for d in report["differing"]] == ["ns/d", "ns/e"]
    assert report["differingNotListed"] == 1
    sample = registry.get_sample_value(
        "scheduler_shadow_comparisons_total",
        {"profile": "prod", "verdict": "filtered", "plugin": "NodeAffinity"},
    )
    assert sample == 2
    assert not list(tmp_path.glob(".*.tmp"))
