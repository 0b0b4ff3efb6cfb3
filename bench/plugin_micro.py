"""Per-pod cost of the resource plugins' batch forms on a realistic 5,000-node table.

    python bench/plugin_micro.py                  # 5,000 nodes, 2,000 repetitions per case
    python bench/plugin_micro.py --nodes 500 --repeat 500

Prints microseconds per call (the best and the median of several rounds; the best is the
steadier figure on a machine shared with other work) for NodeResourcesFit's filter_nodes
and score_nodes (each scoring strategy) and NodeResourcesBalancedAllocation's score_nodes, over
all rows and over every second row. Every repetition starts from a fresh CycleState and runs
the plugin's PreFilter / PreScore outside the timed region, as a scheduling cycle would.

Nodes mirror what kubelets report (cpu, memory, ephemeral-storage, pods, hugepages; every
tenth node has GPUs) and each holds a few pods of varied size, some without requests.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from plugins.balanced_allocation import NodeResourcesBalancedAllocation
from plugins.balanced_allocation import NodeResourcesBalancedAllocationArgs
from plugins.node_resources_fit import NodeResourcesFit
from plugins.node_resources_fit import NodeResourcesFitArgs
from scheduler.framework import CycleState
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod

GPU = "nvidia.com/gpu"
ROUNDS = 5


def build_cluster(node_count: int, seed: int) -> NodeTable:
    rng = random.Random(seed)
    nodes = []
    pods = []
    for i in range(node_count):
        name = f"node-{i}"
        capacity: dict[str, str | int] = {
            "cpu": rng.choice(["4", "8", "16"]),
            "memory": rng.choice(["16Gi", "32Gi", "64Gi"]),
            "ephemeral-storage": "100Gi",
            "pods": 110,
            "hugepages-2Mi": "0",
            "hugepages-1Gi": "0",
        }
        if i % 10 == 0:
            capacity[GPU] = 4
        nodes.append(make_node(name).capacity(**capacity).obj())
        for j in range(rng.randint(1, 5)):
            builder = make_pod(f"{name}-pod-{j}").node(name)
            if rng.random() < 0.8:
                builder = builder.req(
                    cpu=f"{rng.choice([100, 250, 500, 1000])}m",
                    memory=f"{rng.choice([128, 500, 1024, 2048])}Mi",
                )
            pods.append(builder.obj())
    return build_table(nodes, pods)


def time_calls(
    prepare: Callable[[CycleState], Any],
    call: Callable[[CycleState], Any],
    repeat: int,
) -> tuple[float, float]:
    """Best and median over rounds of the mean microseconds per `call`, each call on a freshly
    prepared state."""
    per_round = []
    for _ in range(ROUNDS):
        spent = 0.0
        for _ in range(repeat):
            state = CycleState()
            prepare(state)
            started = time.perf_counter()
            call(state)
            spent += time.perf_counter() - started
        per_round.append(spent / repeat * 1e6)
    return min(per_round), statistics.median(per_round)


def fit_plugin(table: NodeTable, args: dict[str, Any] | None = None) -> NodeResourcesFit:
    model = NodeResourcesFitArgs.model_validate(args or {})
    return NodeResourcesFit(model, FakeHandle(table))


def run(node_count: int, repeat: int) -> None:
    table = build_cluster(node_count, seed=1)
    all_rows = table.all_rows()
    half_rows = all_rows[::2].copy()
    common = make_pod("incoming").req(cpu="100m", memory="500Mi").obj()
    gpu = make_pod("incoming-gpu").req(cpu="1", memory="2Gi", **{GPU: 1}).obj()
    huge = make_pod("incoming-huge").req(cpu="12", memory="48Gi").obj()
    print(
        f"{table.size} nodes, {len(table.resource_names)} resource columns, {repeat} calls x "
        f"{ROUNDS} rounds; microseconds per call"
    )
    print(f"  {'':<58} {'best':>9} {'median':>9}")

    def report(label: str, value: tuple[float, float]) -> None:
        print(f"  {label:<58} {value[0]:9.1f} {value[1]:9.1f}")

    least = fit_plugin(table)
    most = fit_plugin(table, {"scoringStrategy": {"type": "MostAllocated"}})
    ratio = fit_plugin(
        table,
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                },
            }
        },
    )
    with_gpu = [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]
    least_gpu = fit_plugin(
        table, {"scoringStrategy": {"type": "LeastAllocated", "resources": with_gpu}}
    )
    balanced = NodeResourcesBalancedAllocation(
        NodeResourcesBalancedAllocationArgs(), FakeHandle(table)
    )
    balanced_gpu = NodeResourcesBalancedAllocation(
        NodeResourcesBalancedAllocationArgs.model_validate({"resources": with_gpu}),
        FakeHandle(table),
    )

    def fit_filter(plugin: NodeResourcesFit, pod: Pod, rows: Rows) -> tuple[float, float]:
        return time_calls(
            lambda s: plugin.pre_filter(s, pod, table),
            lambda s: plugin.filter_nodes(s, pod, table, rows),
            repeat,
        )

    def scored(plugin: Any, pod: Pod, rows: Rows) -> tuple[float, float]:
        return time_calls(
            lambda s: plugin.pre_score(s, pod, table, rows),
            lambda s: plugin.score_nodes(s, pod, table, rows),
            repeat,
        )

    def rejected(pod: Pod) -> str:
        state = CycleState()
        least.pre_filter(state, pod, table)
        codes = least.filter_nodes(state, pod, table, all_rows).codes
        return f"{int((codes != 0).sum())} rejected"

    print("NodeResourcesFit filter_nodes")
    report(f"cpu+memory pod, all rows ({rejected(common)})", fit_filter(least, common, all_rows))
    report("cpu+memory pod, every second row", fit_filter(least, common, half_rows))
    report(f"cpu+memory+gpu pod, all rows ({rejected(gpu)})", fit_filter(least, gpu, all_rows))
    report(f"oversized pod, all rows ({rejected(huge)})", fit_filter(least, huge, all_rows))
    print("NodeResourcesFit score_nodes")
    report("LeastAllocated, cpu+memory pod, all rows", scored(least, common, all_rows))
    report("LeastAllocated, cpu+memory pod, every second row", scored(least, common, half_rows))
    report("LeastAllocated, cpu+memory+gpu pod, all rows", scored(least, gpu, all_rows))
    report("LeastAllocated scoring gpu too, gpu pod, all rows", scored(least_gpu, gpu, all_rows))
    report("MostAllocated, cpu+memory pod, all rows", scored(most, common, all_rows))
    report("RequestedToCapacityRatio, cpu+memory pod, all rows", scored(ratio, common, all_rows))
    print("NodeResourcesBalancedAllocation score_nodes")
    report("cpu+memory pod, all rows", scored(balanced, common, all_rows))
    report("cpu+memory pod, every second row", scored(balanced, common, half_rows))
    report("balancing gpu too, gpu pod, all rows", scored(balanced_gpu, gpu, all_rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=2000)
    options = parser.parse_args()
    run(options.nodes, options.repeat)


if __name__ == "__main__":
    main()
