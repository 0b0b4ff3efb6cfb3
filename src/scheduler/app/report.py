"""What `simulate` prints: a summary table, or JSON with every pod's outcome."""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any, TextIO

from scheduler.app.simulation import SimulationResult
from scheduler.objects.pod import Pod
from scheduler.objects.resources import CPU, MEMORY, parse_resource_list

# Above this many nodes the per-node table is summarised into a distribution.
NODE_TABLE_LIMIT = 25


def node_utilisation(result: SimulationResult) -> list[dict[str, Any]]:
    requested: dict[str, Counter[str]] = {}
    pods_on: Counter[str] = Counter()
    for outcome in result.pods:
        if outcome.node is not None:
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
        "podsPerSecond": round(result.pods_per_second, 1),
        "schedulingSeconds": round(result.scheduling_seconds, 3),
        "elapsedSeconds": round(result.elapsed_seconds, 3),
    }


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line.rstrip()]
    out.extend("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)
    return out


def render_text(result: SimulationResult) -> str:
    s = summary(result)
    lines = [
        f"Profiles: {', '.join(s['profiles'])}",
        f"Nodes: {s['nodes']}   Pods: {s['pods']}",
        "",
        *_table(
            ["OUTCOME", "PODS"],
            [
                ["Scheduled", str(s["scheduled"])],
                ["Unschedulable", str(s["unschedulable"])],
                *([["Error", str(s["error"])]] if s["error"] else []),
                ["Gated", str(s["gated"])],
                ["Not handled (unknown schedulerName)", str(s["notHandled"])],
                *([["Pending", str(s["pending"])]] if s["pending"] else []),
                *([["Waiting at Permit", str(s["waiting"])]] if s["waiting"] else []),
            ],
        ),
        "",
        f"Throughput: {s['podsPerSecond']} pods/s ({s['scheduled']} pods bound in "
        f"{s['schedulingSeconds']} s)",
    ]
    if result.groups:
        rows = [
            [g.key, str(g.min_member), str(g.pods), str(g.bound), g.status, g.message]
            for g in result.groups
        ]
        lines += ["", "PodGroups:"]
        lines += _table(["GROUP", "MIN", "PODS", "BOUND", "OUTCOME", "WHY"], rows)
    explained = [p for p in result.pods if p.status != "Scheduled"]
    if explained:
        lines += ["", "Not placed:"]
        by_message = Counter((p.status, p.message) for p in explained)
        if len(explained) <= 50:
            rows = [[p.key, p.scheduler_name, p.status, p.message] for p in explained]
            lines += _table(["POD", "SCHEDULER", "STATUS", "REASON"], rows)
        else:
            rows = [[str(n), status, message] for (status, message), n in by_message.most_common()]
            lines += _table(["PODS", "STATUS", "REASON"], rows)
    nodes = node_utilisation(result)
    lines.append("")
    if len(nodes) <= NODE_TABLE_LIMIT:
        rows = [
            [n["name"], str(n["pods"]), f"{n['cpuPercent']}%", f"{n['memoryPercent']}%"]
            for n in nodes
        ]
        lines += _table(["NODE", "PODS", "CPU REQUESTED", "MEMORY REQUESTED"], rows)
    else:
        lines += _distribution(nodes)
    return "\n".join(lines) + "\n"


def _distribution(nodes: list[dict[str, Any]]) -> list[str]:
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


def write(result: SimulationResult, output: str, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    if output == "json":
        json.dump(to_json(result), stream, indent=2)
        stream.write("\n")
    else:
        stream.write(render_text(result))


class ProgressBar:
    """A single-line progress bar on a terminal; silent elsewhere."""

    def __init__(self, stream: TextIO | None = None, width: int = 30) -> None:
        self._stream = stream or sys.stderr
        self._width = width
        self._last = -1
        self.enabled = self._stream.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        filled = self._width * done // total
        if filled == self._last and done != total:
            return
        self._last = filled
        bar = "#" * filled + "." * (self._width - filled)
        self._stream.write(f"\r[{bar}] {done}/{total} pods bound")
        self._stream.flush()

    def finish(self) -> None:
        if self.enabled and self._last >= 0:
            self._stream.write("\n")
            self._stream.flush()
