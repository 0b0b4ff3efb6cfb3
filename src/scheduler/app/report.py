"""What `simulate` prints: summary tables, JSON with every pod's outcome, or the final cluster
as YAML (the HTML page is `html_report`)."""

from __future__ import annotations

import io
import json
import sys
from collections import Counter
from typing import Any
from typing import TextIO

import yaml
from rich.console import Console
from rich.table import Table
from rich.text import Text

from scheduler.app.outcomes import PREEMPTED
from scheduler.app.simulation import SimulationResult
from scheduler.config.yaml_rules import GoSafeDumper
from scheduler.objects.pod import Pod
from scheduler.objects.resources import CPU
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import parse_resource_list

# Above this many nodes the per-node table is summarised into a distribution.
NODE_TABLE_LIMIT = 25


def node_utilisation(result: SimulationResult) -> list[dict[str, Any]]:
    requested: dict[str, Counter[str]] = {}
    pods_on: Counter[str] = Counter()
    for outcome in result.pods:
        # A victim names the node it lost; it is no longer there.
        if outcome.node is not None and outcome.status != PREEMPTED:
            pods_on[outcome.node] += 1
    for raw in _bound_pods(result):
        pod = Pod.from_dict(raw)
        bucket = requested.setdefault(pod.node_name, Counter())
        bucket.update(pod.requests)
    rows = []
    for node in result.nodes:
        name = str(node["metadata"]["name"])
        status = node.get("status") or {}
        allocatable = parse_resource_list(status.get("allocatable") or status.get("capacity"))
        used = requested.get(name, Counter())
        rows.append(
            {
                "name": name,
                "pods": pods_on[name],
                "cpuRequestedMilli": used[CPU],
                "cpuAllocatableMilli": allocatable.get(CPU, 0),
                "memoryRequestedBytes": used[MEMORY],
                "memoryAllocatableBytes": allocatable.get(MEMORY, 0),
                "cpuPercent": _percent(used[CPU], allocatable.get(CPU, 0)),
                "memoryPercent": _percent(used[MEMORY], allocatable.get(MEMORY, 0)),
            }
        )
    return rows


def _bound_pods(result: SimulationResult) -> list[dict[str, Any]]:
    return [p for p in result.raw_pods if (p.get("spec") or {}).get("nodeName")]


def _percent(used: int, total: int) -> float:
    return round(100.0 * used / total, 1) if total else 0.0


def to_json(result: SimulationResult) -> dict[str, Any]:
    return {
        "summary": summary(result),
        "pods": [
            {
                "namespace": p.namespace,
                "name": p.name,
                "schedulerName": p.scheduler_name,
                "status": p.status,
                "node": p.node,
                "message": p.message,
                "rejectedBy": result.rejected_by.get(p.key, []),
            }
            for p in result.pods
        ],
        "nodes": node_utilisation(result),
        "groups": [
            {
                "namespace": g.namespace,
                "name": g.name,
                "minMember": g.min_member,
                "pods": g.pods,
                "bound": g.bound,
                "waiting": g.waiting,
                "status": g.status,
                "message": g.message,
            }
            for g in result.groups
        ],
    }


def summary(result: SimulationResult) -> dict[str, Any]:
    return {
        "profiles": result.profiles,
        "nodes": len(result.nodes),
        "pods": len(result.pods),
        "scheduled": result.count("Scheduled"),
        "unschedulable": result.count("Unschedulable"),
        "error": result.count("Error"),
        "gated": result.count("Gated"),
        "notHandled": result.count("NotHandled"),
        "pending": result.count("Pending"),
        "waiting": result.count("Waiting"),
        "preempted": result.count(PREEMPTED),
        "seed": result.seed,
        "podsPerSecond": round(result.pods_per_second, 1),
        "schedulingSeconds": round(result.scheduling_seconds, 3),
        "elapsedSeconds": round(result.elapsed_seconds, 3),
    }


def _table(headers: list[str], rows: list[list[str]]) -> Table:
    table = Table(box=None, show_edge=False, pad_edge=False, header_style="bold")
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        # As Text, so that a reason such as "gates: [example.com/quota]" is not read as markup.
        table.add_row(*(Text(cell) for cell in row))
    return table


def render_text(result: SimulationResult, width: int | None = None) -> str:
    """The report as plain text; `width` bounds the lines (unbounded when None)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width or 10_000, color_system=None, highlight=False)
    for part in _text_parts(result):
        console.print(part, markup=False)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def _text_parts(result: SimulationResult) -> list[str | Table]:
    s = summary(result)
    outcomes = [
        ["Scheduled", str(s["scheduled"])],
        ["Unschedulable", str(s["unschedulable"])],
        *([["Error", str(s["error"])]] if s["error"] else []),
        ["Gated", str(s["gated"])],
        ["Not handled (unknown schedulerName)", str(s["notHandled"])],
        *([["Pending", str(s["pending"])]] if s["pending"] else []),
        *([["Waiting at Permit", str(s["waiting"])]] if s["waiting"] else []),
        *([["Preempted (victims)", str(s["preempted"])]] if s["preempted"] else []),
    ]
    parts: list[str | Table] = [
        f"Profiles: {', '.join(s['profiles'])}",
        f"Nodes: {s['nodes']}   Pods: {s['pods']}   Seed: {s['seed']} "
        f"(repeat with --seed {s['seed']})",
        _table(["OUTCOME", "PODS"], outcomes),
        "",
        f"Throughput: {s['podsPerSecond']} pods/s ({s['scheduled']} pods bound in "
        f"{s['schedulingSeconds']} s)",
    ]
    if result.groups:
        rows = [
            [g.key, str(g.min_member), str(g.pods), str(g.bound), g.status, g.message]
            for g in result.groups
        ]
        parts += [
            "",
            "PodGroups:",
            _table(["GROUP", "MIN", "PODS", "BOUND", "OUTCOME", "WHY"], rows),
        ]
    victims = [p for p in result.pods if p.status == PREEMPTED]
    if victims:
        rows = [[p.key, p.node or "", p.message] for p in victims]
        parts += ["", "Preempted:", _table(["POD", "NODE", "WHY"], rows)]
    explained = [p for p in result.pods if p.status not in ("Scheduled", PREEMPTED)]
    if explained:
        parts += ["", "Not placed:"]
        if len(explained) <= 50:
            rows = [[p.key, p.scheduler_name, p.status, p.message] for p in explained]
            parts.append(_table(["POD", "SCHEDULER", "STATUS", "REASON"], rows))
        else:
            by_message = Counter((p.status, p.message) for p in explained)
            rows = [[str(n), status, message] for (status, message), n in by_message.most_common()]
            parts.append(_table(["PODS", "STATUS", "REASON"], rows))
    nodes = node_utilisation(result)
    parts.append("")
    if len(nodes) <= NODE_TABLE_LIMIT:
        rows = [
            [n["name"], str(n["pods"]), f"{n['cpuPercent']}%", f"{n['memoryPercent']}%"]
            for n in nodes
        ]
        parts.append(_table(["NODE", "PODS", "CPU REQUESTED", "MEMORY REQUESTED"], rows))
    else:
        parts.append(_distribution(nodes))
    return parts


def _distribution(nodes: list[dict[str, Any]]) -> Table:
    def stats(key: str) -> list[str]:
        values = sorted(float(n[key]) for n in nodes)
        mean = sum(values) / len(values)
        median = values[len(values) // 2]
        return [f"{values[0]}%", f"{median}%", f"{round(mean, 1)}%", f"{values[-1]}%"]

    pods = sorted(int(n["pods"]) for n in nodes)
    return _table(
        ["PER NODE", "MIN", "MEDIAN", "MEAN", "MAX"],
        [
            ["cpu requested", *stats("cpuPercent")],
            ["memory requested", *stats("memoryPercent")],
            [
                "pods",
                str(pods[0]),
                str(pods[len(pods) // 2]),
                str(round(sum(pods) / len(pods), 1)),
                str(pods[-1]),
            ],
        ],
    )


def to_yaml(result: SimulationResult) -> str:
    """The final cluster as multi-document YAML, one object per document, by resource."""
    documents = [obj for objects in result.cluster.values() for obj in objects]
    # Quoted as kubectl's YAML reader needs: a label value `y` written bare would read as true.
    return yaml.dump_all(documents, Dumper=GoSafeDumper, sort_keys=False, explicit_start=True)


def write(result: SimulationResult, output: str, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    if output == "json":
        json.dump(to_json(result), stream, indent=2)
        stream.write("\n")
    elif output == "yaml":
        stream.write(to_yaml(result))
    else:
        terminal = stream.isatty()
        width = Console(file=stream).width if terminal else None
        stream.write(render_text(result, width))
