"""`explain` output: a table (default), a wide table (every plugin a column), or JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table

from scheduler.core.explain.model import ALLOWED
from scheduler.core.explain.model import GATED
from scheduler.core.explain.model import REJECTED
from scheduler.core.explain.model import SKIPPED
from scheduler.core.explain.model import TIMES_OUT
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.model import NodeReport
from scheduler.core.explain.model import PermitReport
from scheduler.core.explain.model import Verdict
from scheduler.framework.durations import format_duration

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


# The reason the API server gives the PodScheduled condition of a pod created with gates.
SCHEDULING_GATED = "SchedulingGated"

_WAIT_ENDS = {
    ALLOWED: "every plugin allows it; binding follows",
    REJECTED: "rejected",
    TIMES_OUT: "nothing here releases it, so it times out",
}


def _write_permit(report: PermitReport, say: Callable[[str], None]) -> None:
    """Reserve and Permit at the chosen node, the pods a wait brought forward, its end."""
    if report.reserve is not None:
        say(f"Reserve at {report.node}: {_answer(report.reserve)}")
        return
    if not report.plugins:
        return
    answers = []
    for verdict in report.plugins:
        answer = _answer(verdict)
        timeout = report.timeouts.get(verdict.plugin)
        answers.append(answer if timeout is None else f"{answer}, up to {format_duration(timeout)}")
    say(f"Permit at {report.node}: " + ", ".join(answers))
    if report.companions:
        say("Pods the wait brought forward, each through the same cycle in turn:")
        for companion in report.companions:
            on_node = f" on {companion.node}" if companion.node else ""
            said = f": {companion.message}" if companion.message else ""
            say(f"  {companion.pod}: {companion.outcome}{on_node}{said}")
    if report.timeouts:
        say(f"The wait ends: {_WAIT_ENDS.get(report.result, report.result)}.")


def _answer(verdict: Verdict) -> str:
    said = f" ({_reason(verdict)})" if verdict.reasons else ""
    return f"{verdict.plugin}: {verdict.code}{said}"


def _last_word(explanation: Explanation) -> str:
    """What the pod's PodScheduled condition says, against what explain found now: no
    condition at all on a pod the scheduler would try (no scheduler has written on it), or
    a rejection other than the one explain finds (the cluster changed since)."""
    reported, created = explanation.reported, explanation.created
    if explanation.bound_to:
        return ""
    tried = explanation.outcome not in (SKIPPED, GATED)
    if reported is None:
        if not tried:
            return ""
        since = f" (created {created})" if created else ""
        return (
            f"No scheduler has written on this pod yet{since}: it has no PodScheduled "
            "condition. Is a scheduler with its schedulerName running and leading?"
        )
    state = f"{reported.status}, {reported.reason or 'no reason'}, since {reported.since or '?'}"
    # SchedulingGated is the API server's, written when the pod was created with gates.
    if reported.status != "False" or not tried or reported.reason == SCHEDULING_GATED:
        said = f": {reported.message}" if reported.message else ""
        return f"The pod's PodScheduled condition: {state}{said}"
    if reported.message == explanation.message:
        return f"The pod's PodScheduled condition says the same ({state})."
    return (
        f"The pod's PodScheduled condition says otherwise ({state}): {reported.message} "
        "The cluster has changed since the scheduler's last attempt; it tries the pod again "
        "on an event that may help it."
    )


def write_table(explanation: Explanation, out: TextIO, *, wide: bool = False) -> None:
    width = None if out.isatty() else _PIPE_WIDTH * (2 if wide else 1)
    console = Console(file=out, width=width, highlight=False)

    def say(text: str) -> None:
        # Plain text, never read as markup, and wrapped by the terminal rather than by us.
        console.print(text, markup=False, soft_wrap=True)

    say(f"Pod {explanation.pod} (profile {explanation.profile}): {explanation.outcome}")
    gate = explanation.gate
    if gate is not None:
        held = f"{gate.plugin}: {_reason(gate)}" if gate.reasons else gate.plugin
        say(
            f"PreEnqueue holds it out of the queue ({held}); the scheduler does not try it "
            "until that plugin lets it through. Below is what it would do then."
        )
    if explanation.bound_to:
        say(
            f"It is bound to {explanation.bound_to}: explained as if it were pending now, its "
            "claims and volumes as they are."
        )
    if explanation.chosen_node:
        same = " (where it is)" if explanation.chosen_node == explanation.bound_to else ""
        say(f"The scheduler would choose {explanation.chosen_node}{same}.")
    if explanation.message:
        say(explanation.message)
    last = _last_word(explanation)
    if last:
        say(last)
    # Plugins that skipped have nothing to say about this pod; -o wide lists them too.
    said = [v for v in explanation.pre_filter if wide or v.code != "Skip"]
    if said:
        pre = ", ".join(
            f"{v.plugin}: {v.code}" + (f" ({_reason(v)})" if v.reasons else "") for v in said
        )
        say(f"PreFilter: {pre}")
    console.print(_nodes_table(explanation, wide))
    details = [
        (report.name, verdict)
        for report in sorted(explanation.nodes, key=_node_order)
        for verdict in report.plugins
        if verdict.details
    ]
    if details:
        say("Why (as the plugins see it):")
        for node, verdict in details:
            for line in verdict.details:
                say(f"  {node} {verdict.plugin}: {line}")
    if explanation.scores:
        console.print(_scores_table(explanation, wide))
    for report in explanation.post_filter:
        said_by = f": {report.message}" if report.message else ""
        say(f"PostFilter {report.plugin}: {report.code}{said_by}")
        for candidate in report.candidates:
            victims = ", ".join(f"{v.pod} (priority {v.priority})" for v in candidate.victims)
            say(f"  candidate {candidate.node}: preempt {victims}")
    if explanation.permit is not None:
        _write_permit(explanation.permit, say)
    for action in explanation.cancelled_actions:
        say(f"  (not carried out: {action})")
    if explanation.fixes:
        say("Nearest fixes (each checked by filtering the changed pod again):")
        for fix in explanation.fixes:
            say(f"  - {fix.summary}")
            if wide:
                say(f"    patch: {json.dumps(fix.patch, sort_keys=True)}")


def write(explanation: Explanation, output: str, out: TextIO) -> None:
    if output == "json":
        json.dump(explanation.to_json(), out, indent=2, ensure_ascii=False)
        out.write("\n")
        return
    write_table(explanation, out, wide=output == "wide")
