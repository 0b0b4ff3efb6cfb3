"""`explain` output: a table (default), a wide table (every plugin a column), or JSON."""

from __future__ import annotations

import json
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table

from scheduler.core.explain.model import Explanation, NodeReport, Verdict

OUTPUTS = ("table", "wide", "json")
# Wide enough for a FailedScheduling text; a terminal narrower than this wraps cells instead.
_PIPE_WIDTH = 160


def _reason(verdict: Verdict) -> str:
    return "; ".join(verdict.reasons) if verdict.reasons else ""


def _cell(verdict: Verdict) -> str:
    if verdict.passed:
        return "ok"
    if verdict.code == "Skip":
        return "skip"
    return _reason(verdict) or verdict.code


def _ran(explanation: Explanation) -> list[int]:
    """Positions of the Filter plugins that ran on some node (skipped ones add no column)."""
    return [
        i
        for i in range(len(explanation.filter_plugins))
        if any(len(n.plugins) > i and n.plugins[i].code != "Skip" for n in explanation.nodes)
    ]


def _nodes_table(explanation: Explanation, wide: bool) -> Table:
    """One row per node; wide adds each Filter plugin's own answer as a column."""
    table = Table(box=box.SIMPLE, title="Filter", title_justify="left")
    table.add_column("NODE", no_wrap=True)
    table.add_column("VERDICT", no_wrap=True)
    table.add_column("PLUGIN", no_wrap=True)
    table.add_column("REASON")
    columns = _ran(explanation) if wide else []
    for i in columns:
        table.add_column(explanation.filter_plugins[i])
    for report in sorted(explanation.nodes, key=_node_order):
        verdict = report.verdict
        plugin = "" if verdict.passed else verdict.plugin
        row = [
            report.name,
            "Feasible" if verdict.passed else verdict.code,
            plugin,
            _reason(verdict),
        ]
        row.extend(_cell(report.plugins[i]) if i < len(report.plugins) else "" for i in columns)
        table.add_row(*row)
    return table


def _node_order(report: NodeReport) -> tuple[bool, str]:
    return (not report.feasible, report.name)


def _scores_table(explanation: Explanation, wide: bool) -> Table:
    table = Table(box=box.SIMPLE, title="Score (feasible nodes)", title_justify="left")
    table.add_column("NODE")
    table.add_column("TOTAL", justify="right")
    names = [p.plugin for p in explanation.scores[0].plugins] if explanation.scores else []
    for name in names:
        table.add_column(name, justify="right")
    for score in explanation.scores:
        cells = [
            f"{p.weighted} ({p.raw}→{p.normalized}×{p.weight})" if wide else str(p.weighted)
            for p in score.plugins
        ]
        chosen = " *" if score.node == explanation.chosen_node else ""
        table.add_row(score.node + chosen, str(score.total), *cells)
    return table


def write_table(explanation: Explanation, out: TextIO, *, wide: bool = False) -> None:
    width = None if out.isatty() else _PIPE_WIDTH * (2 if wide else 1)
    console = Console(file=out, width=width, highlight=False)
    console.print(
        f"Pod {explanation.pod} (profile {explanation.profile}): {explanation.outcome}",
        markup=False,
    )
    if explanation.chosen_node:
        console.print(f"The scheduler would choose {explanation.chosen_node}.", markup=False)
    if explanation.message:
        console.print(explanation.message, markup=False)
    if explanation.pre_filter:
        pre = ", ".join(
            f"{v.plugin}: {v.code}" + (f" ({_reason(v)})" if v.reasons else "")
            for v in explanation.pre_filter
        )
        console.print(f"PreFilter: {pre}", markup=False)
    console.print(_nodes_table(explanation, wide))
    if explanation.scores:
        console.print(_scores_table(explanation, wide))
    for report in explanation.post_filter:
        console.print(
            f"PostFilter {report.plugin}: {report.code}"
            + (f": {report.message}" if report.message else ""),
            markup=False,
        )
        for candidate in report.candidates:
            victims = ", ".join(f"{v.pod} (priority {v.priority})" for v in candidate.victims)
            console.print(f"  candidate {candidate.node}: preempt {victims}", markup=False)
    for action in explanation.cancelled_actions:
        console.print(f"  (not carried out: {action})", markup=False)
    if explanation.fixes:
        console.print("Nearest fixes (each checked by filtering the changed pod again):")
        for fix in explanation.fixes:
            console.print(f"  - {fix.summary}", markup=False)
            if wide:
                console.print(f"    patch: {json.dumps(fix.patch, sort_keys=True)}", markup=False)


def write(explanation: Explanation, output: str, out: TextIO) -> None:
    if output == "json":
        json.dump(explanation.to_json(), out, indent=2, ensure_ascii=False)
        out.write("\n")
        return
    write_table(explanation, out, wide=output == "wide")
