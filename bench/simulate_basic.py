"""Simulator throughput, every node filtered and scored, measured side by side.

    python -m bench.simulate_basic           # from the repository root: the runs below
    python -m bench.simulate_basic --quick   # the same at a tenth of the size

Runs (each in its own process, so its peak RSS is its own):
- SchedulingBasic, 5,000 nodes / 10,000 pods (4 CPU, 32Gi, 110 pods per node; pods request
  100m CPU and 500Mi), `percentageOfNodesToScore: 100`;
- TopologySpreading, 5,000 nodes in 3 zones / 5,000 pods spread over zones with maxSkew 1;
- SchedulingPodAntiAffinity, 5,000 nodes / 2,000 pods with hostname anti-affinity;
- side by side: SchedulingBasic at 1,000 nodes / 1,000 pods with the vectorized executor and
  with every plugin evaluated node by node, and the ratio of the two.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.workloads import WORKLOADS
from scheduler.app.configuration import load_effective
from scheduler.app.configuration import plugin_registry
from scheduler.app.simulation import simulate
from scheduler.config.feature_gates import FeatureGates

REPO = Path(__file__).resolve().parent.parent

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "percentageOfNodesToScore": 100,
}
RUNS = [
    ("SchedulingBasic", 5000, 10000, True),
    ("TopologySpreading", 5000, 5000, True),
    ("SchedulingPodAntiAffinity", 5000, 2000, True),
]
COMPARISON = ("SchedulingBasic", 1000, 1000)


@dataclass(frozen=True)
class Variant:
    """How a run departs from the defaults: `batching` is the OpportunisticBatching feature
    gate, `disabled` names default plugins the profile leaves out."""

    batching: bool = True
    disabled: tuple[str, ...] = ()

    def config(self) -> dict[str, Any]:
        if not self.disabled:
            return CONFIG
        off = [{"name": name} for name in self.disabled]
        plugins = {"multiPoint": {"disabled": off}}
        return {**CONFIG, "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}

    def flags(self) -> list[str]:
        return ([] if self.batching else ["--no-batching"]) + [
            f"--disable={name}" for name in self.disabled
        ]


def run_worker(
    workload: str, nodes: int, pods: int, vectorize: bool, variant: Variant = Variant()
) -> dict[str, Any]:
    """One simulation in this process; returns its figures."""
    registry = plugin_registry([])
    config, profiles = load_effective(registry, embedded=variant.config())
    objects = WORKLOADS[workload](nodes, pods)
    samples: list[tuple[float, int]] = []

    def progress(bound: int, total: int) -> None:
        samples.append((time.perf_counter(), bound))

    cpu_before = time.process_time()
    result = asyncio.run(
        simulate(
            objects,
            config,
            profiles,
            registry,
            seed=1,
            progress=progress,
            vectorize=vectorize,
            features=FeatureGates({"OpportunisticBatching": variant.batching}),
        )
    )
    cpu_seconds = time.process_time() - cpu_before
    scheduled = result.count("Scheduled")
    return {
        "workload": workload,
        "nodes": nodes,
        "pods": pods,
        "vectorized": vectorize,
        "batching": variant.batching,
        "disabled": list(variant.disabled),
        "scheduled": scheduled,
        "seconds": round(result.scheduling_seconds, 3),
        "podsPerSecond": round(result.pods_per_second, 1),
        "perSecond": per_second_rates(samples),
        "cpuSecondsPer1000Pods": round(1000 * cpu_seconds / max(scheduled, 1), 3),
        "peakRssMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def per_second_rates(samples: list[tuple[float, int]]) -> dict[str, float]:
    """Pods bound in each whole second of the run (scheduler_perf's throughput samples)."""
    if len(samples) < 2:
        return {}
    start = samples[0][0]
    rates: list[float] = []
    last_count, second = samples[0][1], 1
    for moment, count in samples:
        if moment - start >= second:
            rates.append(float(count - last_count))
            last_count, second = count, second + 1
    if not rates:
        return {}
    rates.sort()
    return {
        "p50": rates[len(rates) // 2],
        "p99": rates[min(len(rates) - 1, int(len(rates) * 0.99))],
    }


def spawn(
    workload: str, nodes: int, pods: int, vectorize: bool, variant: Variant = Variant()
) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.simulate_basic", "--worker", workload]
    command += ["--nodes", str(nodes), "--pods", str(pods)]
    if not vectorize:
        command.append("--per-node")
    command += variant.flags()
    output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO).stdout
    figures: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return figures


def describe(figures: dict[str, Any]) -> str:
    mode = "vectorized" if figures["vectorized"] else "per-node"
    rates = figures.get("perSecond") or {}
    return (
        f"{figures['workload']:<26} {mode:<10} {figures['nodes']:>5} nodes "
        f"{figures['scheduled']:>5}/{figures['pods']:<5} pods {figures['podsPerSecond']:>8.1f} "
        f"pods/s (1 s samples p50 {rates.get('p50', '-')}, p99 {rates.get('p99', '-')}) "
        f"{figures['cpuSecondsPer1000Pods']:.2f} CPU-s/1000 pods, "
        f"peak RSS {figures['peakRssMiB']} MiB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every run at a tenth of the size")
    parser.add_argument("--json", help="also write all figures to this file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--nodes", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pods", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--per-node", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-batching", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--disable", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        variant = Variant(not args.no_batching, tuple(args.disable))
        worker = run_worker(args.worker, args.nodes, args.pods, not args.per_node, variant)
        print(json.dumps(worker))
        return 0
    scale = 10 if args.quick else 1
    figures = []
    for workload, nodes, pods, vectorize in RUNS:
        figures.append(spawn(workload, nodes // scale, pods // scale, vectorize))
        print(describe(figures[-1]), flush=True)
    workload, nodes, pods = COMPARISON
    fast = spawn(workload, nodes // scale, pods // scale, True)
    slow = spawn(workload, nodes // scale, pods // scale, False)
    print(describe(fast))
    print(describe(slow))
    ratio = fast["podsPerSecond"] / slow["podsPerSecond"] if slow["podsPerSecond"] else 0.0
    print(f"vectorized / per-node throughput, {workload} at {nodes // scale} nodes: {ratio:.1f}x")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"runs": figures, "vectorized": fast, "perNode": slow, "ratio": ratio}, indent=2
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
