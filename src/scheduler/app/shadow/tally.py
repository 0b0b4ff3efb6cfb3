"""The running account of shadow comparisons: counts, a metric, and the JSON report."""

from __future__ import annotations

import datetime
import json
import os
from collections import Counter
from collections import deque
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from scheduler.app.shadow.verdict import Comparison
from scheduler.app.shadow.verdict import Verdict
from scheduler.observability.catalog import Kind
from scheduler.observability.catalog import MetricSpec
from scheduler.observability.families import new_counter

# Shadow mode's own family, registered only by `run --shadow`, so a scheduling daemon never
# exposes it.
SHADOW_COMPARISONS = MetricSpec(
    "scheduler_shadow_comparisons_total",
    Kind.COUNTER,
    "[ALPHA] Pods bound by the production scheduler that shadow mode compared with its own "
    "choice, by verdict (same_node and tied_best agree) and, for 'filtered', the plugin that "
    "rejected the production node.",
    ("profile", "verdict", "plugin"),
)

# Differing pods kept for the report; older ones are counted but no longer listed.
DEFAULT_DIFFERING_KEPT = 1000


class ShadowTally:
    def __init__(
        self, registry: CollectorRegistry, *, differing_kept: int = DEFAULT_DIFFERING_KEPT
    ) -> None:
        self._metric = new_counter(SHADOW_COMPARISONS, registry)
        self.by_verdict: Counter[Verdict] = Counter()
        self.by_plugin: Counter[str] = Counter()
        self.differing: deque[Comparison] = deque(maxlen=differing_kept)
        self.differing_total = 0

    def record(self, comparison: Comparison) -> None:
        verdict = comparison.verdict
        self._metric.labels(comparison.scheduler_name, str(verdict), comparison.plugin).inc()
        self.by_verdict[verdict] += 1
        if verdict.agrees:
            return
        if comparison.plugin:
            self.by_plugin[comparison.plugin] += 1
        self.differing_total += 1
        self.differing.append(comparison)

    @property
    def compared(self) -> int:
        return sum(self.by_verdict.values())

    def report(self, generated_at: datetime.datetime) -> dict[str, Any]:
        agreed = sum(n for verdict, n in self.by_verdict.items() if verdict.agrees)
        return {
            "generatedAt": generated_at.isoformat(),
            "compared": self.compared,
            "agreed": agreed,
            "differed": self.compared - agreed,
            "byVerdict": {str(v): self.by_verdict.get(v, 0) for v in Verdict},
            "filteredByPlugin": dict(sorted(self.by_plugin.items())),
            # The most recent differing pods, oldest first.
            "differing": [c.as_json() for c in self.differing],
            "differingNotListed": self.differing_total - len(self.differing),
        }


def write_report(path: Path, report: dict[str, Any]) -> None:
    """Replaces `path` atomically, so a reader never sees half a report."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    os.replace(temporary, path)
