"""SchedulingBasic in the simulator: every node filtered and scored, measured side by side.

    python bench/simulate_basic.py                 # 5,000 nodes / 10,000 pods + comparison
    python bench/simulate_basic.py --nodes 500 --pods 1000 --compare-nodes 100 --compare-pods 200

Workload (upstream scheduler_perf's SchedulingBasic shape): nodes with 4 CPU, 32Gi memory and
110 pods; pods requesting 100m CPU and 500Mi; `percentageOfNodesToScore: 100`, so no sampling.

Each run happens in its own process so its peak RSS is its own. The comparison runs the same
smaller workload twice in one invocation: once with the vectorized executor (batch forms of
the built-in plugins) and once with every plugin evaluated node by node, and reports the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

NODE_SHAPE = "cpu=4,memory=32Gi,pods=110"
POD_SHAPE = "cpu=100m,memory=500Mi"
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "percentageOfNodesToScore": 100,
}


def run_worker(nodes: int, pods: int, vectorize: bool) -> dict[str, Any]:
    """One simulation in this process; returns its figures."""
    from scheduler.app.configuration import load_effective, plugin_registry
    from scheduler.app.scenario import generate_nodes, generate_pods, parse_shape
    from scheduler.app.simulation import simulate

    registry = plugin_registry([])
    config, profiles = load_effective(registry, embedded=CONFIG)
    objects = generate_nodes(nodes, parse_shape(NODE_SHAPE, "node"), 0)
    objects += generate_pods(pods, parse_shape(POD_SHAPE, "pod"), "default-scheduler")
    samples: list[tuple[float, int]] = []

    def progress(bound: int, total: int) -> None:
        samples.append((time.perf_counter(), bound))

    cpu_before = time.process_time()
    result = asyncio.run(
        simulate(objects, config, profiles, registry, seed=1, progress=progress, vectorize=vectorize)
    )
    cpu_seconds = time.process_time() - cpu_before
    scheduled = result.count("Scheduled")
    return {
        "nodes": nodes,
        "pods": pods,
        "vectorized": vectorize,
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
        "mean": round(statistics.fmean(rates), 1),
    }


def spawn(nodes: int, pods: int, vectorize: bool) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", "--nodes", str(nodes), "--pods", str(pods)]
    if not vectorize:
        command.append("--per-node")
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    figures: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return figures


def describe(figures: dict[str, Any]) -> str:
    mode = "vectorized" if figures["vectorized"] else "per-node  "
    rates = figures.get("perSecond") or {}
    return (
        f"{mode} {figures['nodes']:>6} nodes {figures['scheduled']:>6}/{figures['pods']} pods  "
        f"{figures['podsPerSecond']:>8.1f} pods/s (per-second p50 {rates.get('p50', '-')}, "
        f"p99 {rates.get('p99', '-')})  {figures['cpuSecondsPer1000Pods']:.2f} CPU s/1000 pods  "
        f"peak RSS {figures['peakRssMiB']} MiB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--compare-nodes", type=int, default=1000)
    parser.add_argument("--compare-pods", type=int, default=1000)
    parser.add_argument("--json", help="also write all figures to this file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--per-node", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_worker(args.nodes, args.pods, not args.per_node)))
        return 0
    main_run = spawn(args.nodes, args.pods, True)
    print(describe(main_run))
    fast = spawn(args.compare_nodes, args.compare_pods, True)
    slow = spawn(args.compare_nodes, args.compare_pods, False)
    print(describe(fast))
    print(describe(slow))
    ratio = fast["podsPerSecond"] / slow["podsPerSecond"] if slow["podsPerSecond"] else 0.0
    print(f"vectorized / per-node throughput at {args.compare_nodes} nodes: {ratio:.1f}x")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"main": main_run, "vectorized": fast, "perNode": slow, "ratio": ratio}, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
