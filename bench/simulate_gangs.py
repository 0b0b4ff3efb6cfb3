"""Gang-scheduling throughput in the simulator: 5,000 nodes, 500 PodGroups of 16 pods.

    python -m bench.simulate_gangs           # from the repository root
    python -m bench.simulate_gangs --quick   # a tenth of the size

Nodes have 4 CPU, 32Gi and 110 pods; pods request 100m CPU and 500Mi, so every gang fits and
the figures are the cost of gang scheduling itself: pods bound per second, and how long members
waited at Permit for their quorum (p50/p99 from the scheduler's permit-wait histogram, so
each is the upper bound of its bucket).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
from typing import Any

from prometheus_client.samples import Sample

from scheduler.app.configuration import load_effective
from scheduler.app.configuration import plugin_registry
from scheduler.app.gangs import GANG_CONFIG
from scheduler.app.gangs import generate_gangs
from scheduler.app.scenario import generate_nodes
from scheduler.app.simulation import simulate

NODE_SHAPE = {"cpu": "4", "memory": "32Gi", "pods": "110"}
POD_SHAPE = {"cpu": "100m", "memory": "500Mi"}


def quantile(buckets: list[tuple[float, float]], q: float) -> float:
    """Upper bound of the first bucket holding the q-quantile of (le, cumulative count) pairs."""
    total = buckets[-1][1]
    for bound, count in buckets:
        if total and count >= q * total:
            return bound
    return float("inf")


def permit_wait_buckets(samples: list[Sample]) -> list[tuple[float, float]]:
    pairs = [
        (float(s.labels["le"]), s.value)
        for s in samples
        if s.name == "scheduler_permit_wait_duration_seconds_bucket"
        and s.labels.get("result") == "allowed"
    ]
    return sorted(pairs)


def run(nodes: int, gangs: int, size: int) -> dict[str, Any]:
    registry = plugin_registry([])
    config, profiles = load_effective(registry, embedded=GANG_CONFIG)
    objects = generate_nodes(nodes, NODE_SHAPE, 0) + generate_gangs(
        gangs, size, POD_SHAPE, "default-scheduler"
    )
    cpu_before = time.process_time()
    result = asyncio.run(simulate(objects, config, profiles, registry, seed=1))
    cpu_seconds = time.process_time() - cpu_before
    samples = [s for family in result.metrics.registry.collect() for s in family.samples]
    buckets = permit_wait_buckets(samples)
    scheduled = result.count("Scheduled")
    return {
        "nodes": nodes,
        "gangs": gangs,
        "gangSize": size,
        "scheduled": scheduled,
        "groupsScheduled": sum(1 for g in result.groups if g.status == "Scheduled"),
        "seconds": round(result.scheduling_seconds, 3),
        "podsPerSecond": round(result.pods_per_second, 1),
        "permitWaitP50Seconds": quantile(buckets, 0.5) if buckets else None,
        "permitWaitP99Seconds": quantile(buckets, 0.99) if buckets else None,
        "cpuSecondsPer1000Pods": round(1000 * cpu_seconds / max(scheduled, 1), 3),
        "peakRssMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the size")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    print(json.dumps(run(5000 // scale, 500 // scale, 16), indent=2))


if __name__ == "__main__":
    main()
