"""`simulate --output html FILE`: the whole report as one page that needs nothing but itself.

Styles, script and charts (SVG) are inline, and the page's Content-Security-Policy forbids every
fetch, so it opens offline and can be mailed or attached to a ticket as it is. The charts and
tables are plain HTML; the script only filters the pod table and fills the drill-down.
"""

from __future__ import annotations

import json
from collections import Counter
from collections import defaultdict
from html import escape
from pathlib import Path
from typing import Any

from scheduler.app.failure_reasons import histogram
from scheduler.app.failure_reasons import reasons
from scheduler.app.outcomes import PREEMPTED
from scheduler.app.outcomes import PodOutcome
from scheduler.app.report import node_utilisation
from scheduler.app.report import summary
from scheduler.app.simulation import SimulationResult
from scheduler.framework.errors import ConfigError
from scheduler.objects.pod import Pod
from scheduler.objects.raw import DEFAULT_NAMESPACE

NOT_PLACED = ("Unschedulable", "Error", "Pending", "Waiting", "Gated", "NotHandled")
# The pod table lists pods not placed first, then victims, then the placed ones.
_ROW_ORDER = {PREEMPTED: 1, "Scheduled": 2}
# Up to this many nodes a profile used are named in its row.
_NAMED_NODES = 8
_BAR_WIDTH = 320
_ROW = 22
# Nothing may be fetched: no scripts, styles, images, fonts or connections from anywhere.
_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; form-action 'none'; base-uri 'none'"
)


def write_page(result: SimulationResult, path: Path) -> None:
    try:
        path.write_text(render_page(result), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--output html {path}: cannot write: {exc.strerror or exc}") from exc


def render_page(result: SimulationResult) -> str:
    s = summary(result)
    title = f"Simulation: {s['scheduled']}/{s['pods']} pods scheduled on {s['nodes']} nodes"
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">',
            f"<title>{escape(title)}</title>",
            f"<style>{_STYLE}</style></head><body>",
            f"<h1>{escape(title)}</h1>",
            _summary_section(result),
            _nodes_section(result),
            _reasons_section(result),
            _profiles_section(result),
            _pods_section(result),
            '<script type="application/json" id="report-data">',
            _json_for_script(_pod_details(result)),
            "</script>",
            f"<script>{_SCRIPT}</script>",
            "</body></html>",
        ]
    )


def _summary_section(result: SimulationResult) -> str:
    s = summary(result)
    cards = [
        ("Scheduled", s["scheduled"]),
        ("Unschedulable", s["unschedulable"]),
        ("Preempted", s["preempted"]),
        ("Error", s["error"]),
        ("Gated", s["gated"]),
        ("Not handled", s["notHandled"]),
        ("Waiting", s["waiting"]),
        ("Pending", s["pending"]),
    ]
    items = "".join(
        f'<div class="card"><b>{n}</b><span>{escape(label)}</span></div>'
        for label, n in cards
        if n or label in ("Scheduled", "Unschedulable")
    )
    facts = (
        f"Profiles: {escape(', '.join(s['profiles']))} &middot; seed {s['seed']} "
        f"(repeat with <code>--seed {s['seed']}</code>) &middot; {s['podsPerSecond']} pods/s"
    )
    return f'<section id="summary"><div class="cards">{items}</div><p>{facts}</p></section>'


def _nodes_section(result: SimulationResult) -> str:
    nodes = node_utilisation(result)
    label_width = max((len(n["name"]) for n in nodes), default=4) * 8 + 12
    bar_x = label_width
    width = bar_x + 2 * (_BAR_WIDTH + 70) + 60
    rows = []
    for i, node in enumerate(nodes):
        y = i * _ROW
        cells = [
            f'<g class="node" data-node="{escape(node["name"])}">',
            f'<text x="0" y="{y + 15}">{escape(node["name"])}</text>',
        ]
        for column, (key, css) in enumerate((("cpuPercent", "cpu"), ("memoryPercent", "mem"))):
            x = bar_x + column * (_BAR_WIDTH + 70)
            percent = min(float(node[key]), 100.0)
            cells += [
                f'<rect class="track" x="{x}" y="{y + 4}" width="{_BAR_WIDTH}" height="14"/>',
                f'<rect class="{css}" x="{x}" y="{y + 4}" '
                f'width="{_BAR_WIDTH * percent / 100:.1f}" height="14">'
                f"<title>{escape(node['name'])}: {node[key]}% {css} requested</title></rect>",
                f'<text x="{x + _BAR_WIDTH + 6}" y="{y + 15}">{node[key]}%</text>',
            ]
        cells += [
            f'<text x="{bar_x + 2 * (_BAR_WIDTH + 70)}" y="{y + 15}">{node["pods"]} pods</text>',
            "</g>",
        ]
        rows.append("".join(cells))
    height = max(len(nodes), 1) * _ROW + 4
    legend = (
        '<p class="legend"><span class="swatch cpu"></span>CPU requested '
        '<span class="swatch mem"></span>memory requested, of allocatable</p>'
    )
    svg = (
        f'<svg id="node-bars" role="img" aria-label="requested share of each node" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">{"".join(rows)}</svg>'
    )
    return f'<section id="nodes"><h2>Node utilisation</h2>{legend}{svg}</section>'


def _reasons_section(result: SimulationResult) -> str:
    counts = histogram(p.message for p in result.pods if p.status in NOT_PLACED)
    if not counts:
        body = '<p id="reason-histogram" class="none">Every pod was placed.</p>'
    else:
        most = counts[0][1]
        label_x = _BAR_WIDTH + 60
        rows = []
        for i, (reason, pods) in enumerate(counts):
            y = i * _ROW
            rows.append(
                f'<g class="reason"><rect class="fail" x="0" y="{y + 4}" '
                f'width="{max(_BAR_WIDTH * pods / most, 2):.1f}" height="14"/>'
                f'<text x="{_BAR_WIDTH + 6}" y="{y + 15}">{pods}</text>'
                f'<text class="label" x="{label_x}" y="{y + 15}">{escape(reason)}</text></g>'
            )
        width = label_x + max(len(r) for r, _ in counts) * 8
        height = len(counts) * _ROW + 4
        body = (
            f'<svg id="reason-histogram" role="img" aria-label="pods held back by each reason" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
            f"{''.join(rows)}</svg>"
        )
    return (
        '<section id="reasons"><h2>Why pods were not placed</h2>'
        f'<p class="legend">Pods held back by each reason.</p>{body}</section>'
    )


def _profiles_section(result: SimulationResult) -> str:
    by_profile: dict[str, Counter[str]] = defaultdict(Counter)
    nodes_used: dict[str, set[str]] = defaultdict(set)
    for pod in result.pods:
        by_profile[pod.scheduler_name][pod.status] += 1
        if pod.status == "Scheduled" and pod.node:
            nodes_used[pod.scheduler_name].add(pod.node)
    names = [*result.profiles, *sorted(set(by_profile) - set(result.profiles))]
    rows = []
    for name in names:
        counts = by_profile.get(name, Counter())
        note = "" if name in result.profiles else " (no such profile)"
        rows.append(
            f'<tr data-profile="{escape(name)}"><td>{escape(name)}{note}</td>'
            f"<td>{sum(counts.values())}</td><td>{counts['Scheduled']}</td>"
            f"<td>{sum(counts[s] for s in NOT_PLACED)}</td><td>{counts[PREEMPTED]}</td>"
            f"<td>{escape(_node_list(nodes_used.get(name, set())))}</td></tr>"
        )
    return (
        '<section id="profiles"><h2>Placement per profile</h2><table id="profile-table">'
        "<thead><tr><th>Profile</th><th>Pods</th><th>Scheduled</th><th>Not placed</th>"
        "<th>Preempted</th><th>Placed on</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def _node_list(nodes: set[str]) -> str:
    """A few nodes by name, many by count."""
    if len(nodes) > _NAMED_NODES:
        return f"{len(nodes)} nodes"
    return ", ".join(sorted(nodes)) or "none"


def _pods_section(result: SimulationResult) -> str:
    rows = "".join(
        f'<tr class="pod {escape(p.status.lower())}" data-key="{escape(p.key)}">'
        f"<td>{escape(p.key)}</td><td>{escape(p.scheduler_name)}</td>"
        f"<td>{escape(p.status)}</td><td>{escape(p.node or '')}</td></tr>"
        for p in sorted(result.pods, key=lambda p: (_ROW_ORDER.get(p.status, 0), p.key))
    )
    return (
        '<section id="pods"><h2>Pods</h2>'
        '<input id="pod-filter" type="search" placeholder="filter by name, status or node">'
        '<div class="split"><table id="pod-table"><thead><tr><th>Pod</th><th>Profile</th>'
        f"<th>Status</th><th>Node</th></tr></thead><tbody>{rows}</tbody></table>"
        '<aside id="pod-detail"><p>Choose a pod to see where it went and why.</p></aside>'
        "</div></section>"
    )


def _pod_details(result: SimulationResult) -> dict[str, Any]:
    raw_by_key = {
        f"{p['metadata'].get('namespace', DEFAULT_NAMESPACE)}/{p['metadata']['name']}": p
        for p in result.raw_pods
    }
    return {
        p.key: _detail(p, raw_by_key.get(p.key), result.rejected_by.get(p.key, []))
        for p in result.pods
    }


def _detail(
    outcome: PodOutcome, raw: dict[str, Any] | None, rejected_by: list[str]
) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "rejectedBy": rejected_by,
        "key": outcome.key,
        "status": outcome.status,
        "node": outcome.node,
        "profile": outcome.scheduler_name,
        "message": outcome.message,
        "reasons": reasons(outcome.message) if outcome.status in NOT_PLACED else [],
    }
    if raw is not None:
        pod = Pod.from_dict(raw)
        detail["requests"] = dict(sorted(pod.requests.items()))
        detail["priority"] = pod.priority
        owner = next(
            (r for r in raw["metadata"].get("ownerReferences") or () if r.get("controller")),
            None,
        )
        if owner is not None:
            detail["owner"] = f"{owner.get('kind')}/{owner.get('name')}"
    return detail


def _json_for_script(data: object) -> str:
    # "</" could end the script element early; the escaped form means the same in JSON.
    return json.dumps(data, sort_keys=True).replace("</", "<\\/")


_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.cards{display:flex;gap:12px;flex-wrap:wrap}
.card{background:#fff;border:1px solid #d8dde6;border-radius:6px;padding:8px 14px;min-width:90px}
.card b{display:block;font-size:22px}.card span{color:#5b6475}
svg text{font:12px ui-monospace,monospace;fill:#1d2330}
.track{fill:#e8ebf0}.cpu{fill:#3b73d9}.mem{fill:#2f9e6e}.fail{fill:#d9534f}
.legend{color:#5b6475}.swatch{display:inline-block;width:12px;height:12px;margin:0 4px 0 10px}
.swatch.cpu{background:#3b73d9}.swatch.mem{background:#2f9e6e}
table{border-collapse:collapse;background:#fff}
th,td{border:1px solid #d8dde6;padding:3px 8px;text-align:left;white-space:nowrap}
tr.pod{cursor:pointer}tr.pod:hover,tr.pod.chosen{background:#eef3fd}
tr.unschedulable td:nth-child(3),tr.error td:nth-child(3){color:#c0392b}
tr.preempted td:nth-child(3){color:#b9770e}
.split{display:flex;gap:16px;align-items:flex-start}
#pod-detail{background:#fff;border:1px solid #d8dde6;border-radius:6px;padding:10px 14px;
min-width:320px;position:sticky;top:12px}
#pod-filter{margin:6px 0 10px;padding:4px 8px;width:320px}
"""

_SCRIPT = """
(function () {
  const pods = JSON.parse(document.getElementById("report-data").textContent);
  const detail = document.getElementById("pod-detail");
  function line(label, value) {
    const p = document.createElement("p");
    const b = document.createElement("b");
    b.textContent = label + ": ";
    p.appendChild(b);
    p.appendChild(document.createTextNode(value));
    return p;
  }
  function show(key) {
    const pod = pods[key];
    if (!pod) return;
    document.querySelectorAll("tr.pod.chosen").forEach(r => r.classList.remove("chosen"));
    const row = document.querySelector('tr.pod[data-key="' + CSS.escape(key) + '"]');
    if (row) row.classList.add("chosen");
    detail.replaceChildren();
    const h = document.createElement("h3");
    h.id = "pod-detail-name";
    h.textContent = pod.key;
    detail.appendChild(h);
    detail.appendChild(line("Status", pod.status));
    detail.appendChild(line("Node", pod.node || "none"));
    detail.appendChild(line("Profile", pod.profile));
    if (pod.owner) detail.appendChild(line("Controlled by", pod.owner));
    if (pod.priority !== undefined) detail.appendChild(line("Priority", String(pod.priority)));
    if (pod.requests) {
      const text = Object.entries(pod.requests).map(([k, v]) => k + "=" + v).join(", ");
      detail.appendChild(line("Requests (milli-cpu, bytes)", text || "none"));
    }
    if (pod.message) detail.appendChild(line("Message", pod.message));
    if (pod.rejectedBy.length) {
      const plugins = line("Rejected by plugins", pod.rejectedBy.join(", "));
      plugins.id = "pod-detail-plugins";
      detail.appendChild(plugins);
    }
    if (pod.reasons.length) {
      const list = document.createElement("ul");
      list.id = "pod-detail-reasons";
      for (const [reason, nodes] of pod.reasons) {
        const item = document.createElement("li");
        item.textContent = nodes + " node(s): " + reason;
        list.appendChild(item);
      }
      detail.appendChild(line("Nodes ruled out", ""));
      detail.appendChild(list);
    }
  }
  document.querySelectorAll("tr.pod").forEach(row =>
    row.addEventListener("click", () => {
      location.hash = row.dataset.key;
      show(row.dataset.key);
    }));
  document.getElementById("pod-filter").addEventListener("input", event => {
    const words = event.target.value.toLowerCase().split(/\\s+/).filter(Boolean);
    document.querySelectorAll("tr.pod").forEach(row => {
      const text = row.textContent.toLowerCase();
      row.hidden = !words.every(w => text.includes(w));
    });
  });
  const first = document.querySelector("tr.pod");
  const wanted = decodeURIComponent(location.hash.slice(1));
  show(pods[wanted] ? wanted : first ? first.dataset.key : "");
})();
"""
