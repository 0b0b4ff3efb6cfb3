"""What DataLocality and IPAllocation cost a scheduling cycle on a 5,000-node table.

    python -m bench.locality_and_addresses                  # 5,000 nodes
    python -m bench.locality_and_addresses --nodes 500 --repeat 50

Nodes sit in 3 regions of 4 zones each. Printed: microseconds per call, the best and the
median of several rounds (the best is the steadier figure on a shared machine), each call on a
fresh CycleState:
- DataLocality, PreScore + Score (batch) over every node, for a pod whose data is named by its
  annotation (a zone and a host) and for one reading a bound PV with node affinity;
- IPAllocation, PreFilter + Filter (batch) of every node, then Reserve, for a pod of a network
  served by one cluster-wide /16 with 2,000 addresses taken and a /24 per zone.
The PreBind's cost is the API server's: one read and one write of the pool per round of writes.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from bench.plugin_micro import time_calls
from plugins.data_locality import LOCATIONS_ANNOTATION
from plugins.data_locality import DataLocality
from plugins.ip_allocation import NETWORK
from plugins.ip_allocation import IPAllocation
from scheduler.framework import CycleState
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from tests.ip_pools import ip_pool

REGIONS = 3
ZONES_PER_REGION = 4


def zone_of(i: int) -> tuple[str, str]:
    zone = i % (REGIONS * ZONES_PER_REGION)
    return f"zone-{zone}", f"region-{zone // ZONES_PER_REGION}"


def build_nodes(count: int) -> NodeTable:
    nodes = []
    for i in range(count):
        zone, region = zone_of(i)
        nodes.append(make_node(f"node-{i}").zone(zone, region).obj())
    return build_table(nodes)


def data_locality_cases(table: NodeTable) -> list[tuple[str, Any, Pod]]:
    listers = {
        "persistentvolumes": [make_pv("pv").capacity("100Gi").on_host("node-7").dict()],
        "persistentvolumeclaims": [make_pvc("data").bound_to("pv").dict()],
    }
    plugin = DataLocality(None, FakeHandle(table, listers=listers))
    locations = [{"zone": "zone-3", "size": "200Gi"}, {"hostname": "node-42", "size": "20Gi"}]
    annotated = make_pod("annotated").annotation(LOCATIONS_ANNOTATION, json.dumps(locations))
    with_claim = make_pod("with-claim").spec(volumes=[claim_volume("data")])
    return [
        ("DataLocality, annotated zone + host", plugin, annotated.obj()),
        ("DataLocality, bound PV with node affinity", plugin, with_claim.obj()),
    ]


def score_calls(
    plugin: Any, pod: Pod, table: NodeTable
) -> tuple[Callable[[CycleState], Any], Callable[[CycleState], Any]]:
    rows = table.all_rows()

    def nothing(state: CycleState) -> None:
        del state

    def pre_score_and_score(state: CycleState) -> Any:
        if plugin.pre_score(state, pod, table, rows).is_success:
            return plugin.score_nodes(state, pod, table, rows)
        return None

    return nothing, pre_score_and_score


def ip_allocation_case(table: NodeTable) -> tuple[Any, Pod]:
    taken = {f"10.0.{i // 250}.{i % 250 + 1}": {"uid": f"u{i}", "pod": ""} for i in range(2000)}
    pools = [ip_pool("wide", "10.0.0.0/16", network="pods", allocations=taken)]
    for z in range(REGIONS * ZONES_PER_REGION):
        pools.append(ip_pool(f"zone-{z}", f"10.{100 + z}.0.0/24", network="pods", zone=f"zone-{z}"))
    for pool in pools:
        pool["metadata"]["resourceVersion"] = "1"  # as the informer has them
    plugin = IPAllocation(None, FakeHandle(table, listers={"ippools": pools}))
    return plugin, make_pod("incoming").annotation(NETWORK, "pods").obj()


def allocation_calls(
    plugin: Any, pod: Pod, table: NodeTable
) -> tuple[Callable[[CycleState], Any], Callable[[CycleState], Any]]:
    def nothing(state: CycleState) -> None:
        del state

    rows = table.all_rows()

    def cycle(state: CycleState) -> None:
        plugin.pre_filter(state, pod, table)
        plugin.filter_nodes(state, pod, table, rows)
        plugin.reserve(state, pod, "node-0")
        plugin.unreserve(state, pod, "node-0")

    return nothing, cycle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    table = build_nodes(args.nodes)
    print(f"{table.size} nodes, microseconds per call (best, median of rounds)")
    for label, plugin, pod in data_locality_cases(table):
        best, median = time_calls(*score_calls(plugin, pod, table), args.repeat)
        print(f"  {label + ', PreScore + Score':<62} {best:10.1f} {median:10.1f}")
    plugin, pod = ip_allocation_case(table)
    best, median = time_calls(*allocation_calls(plugin, pod, table), args.repeat)
    label = "IPAllocation, PreFilter + Filter (batch) + Reserve"
    print(f"  {label:<62} {best:10.1f} {median:10.1f}")


if __name__ == "__main__":
    main()
