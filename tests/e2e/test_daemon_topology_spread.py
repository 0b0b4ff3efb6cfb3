"""The daemon spreads pods evenly over zones under a hard topology spread constraint."""

from __future__ import annotations

from collections import Counter

import pytest

from scheduler.objects.node import ZONE_LABEL
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.workload import NODE_LABEL
from tests.e2e.workload import Object
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

ZONES = ("zone-a", "zone-b", "zone-c")
NODES_PER_ZONE = 10
BUSY_ZONE = ZONES[-1]
PODS = 30
# An upper bound for waiting on the daemon, not a synchronisation delay.
BIND_TIMEOUT_S = 120.0


def _create_zone_node(workload: Workload, zone: str) -> str:
    """A node of `workload` (deleted with its other nodes) in `zone`."""
    name = unique(f"node-{zone}")
    builder = make_node(name).capacity(cpu="4", memory="8Gi", pods=110).zone(zone)
    manifest = builder.label(NODE_LABEL, workload.label_value).dict()
    manifest["metadata"].pop("uid")
    created = workload.admin.post("/api/v1/nodes", manifest)
    assert created.status == 201, created
    workload.nodes.append(name)
    return name


def _spread_pod(workload: Workload, name: str, scheduler: str, app: str) -> Object:
    """A pod of `app` that may not make any zone hold more than one pod of `app` above another."""
    constraint = {
        "maxSkew": 1,
        "topologyKey": ZONE_LABEL,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": app}},
    }
    builder = make_pod(name, workload.namespace).scheduler(scheduler).req(cpu="100m")
    builder.label("app", app).node_selector(**workload.node_selector)
    manifest = builder.spec(topologySpreadConstraints=[constraint]).dict()
    manifest["metadata"].pop("uid")
    return manifest


def test_30_pods_with_a_hard_zone_spread_land_10_per_zone(
    daemons: DaemonLauncher, workload: Workload
) -> None:
    ours, theirs, app = unique("sched"), unique("other-sched"), unique("app")
    zone_of = {
        _create_zone_node(workload, zone): zone for zone in ZONES for _ in range(NODES_PER_ZONE)
    }
    # Other work keeps the last zone's nodes three-quarters busy, so scoring alone would send
    # every pod to the first two zones: only the hard constraint brings a third of them here.
    busy = [node for node, zone in zone_of.items() if zone == BUSY_ZONE]
    for i, node in enumerate(busy):
        workload.create_pods([f"filler-{i}"], theirs, cpu="3", node_name=node)
    daemons.start(ours)
    names = [f"spread-{i:02}" for i in range(PODS)]
    for name in names:
        workload.create_pod(_spread_pod(workload, name, ours, app))

    placed = workload.wait_bound(names, timeout_s=BIND_TIMEOUT_S)

    assert set(placed.values()) <= zone_of.keys()
    assert Counter(zone_of[node] for node in placed.values()) == {
        zone: PODS // len(ZONES) for zone in ZONES
    }
    # One pod at a time, each seeing the ones placed before it: the least-filled zone always
    # had room, so no pod was ever turned away.
    assert workload.events("FailedScheduling") == []
