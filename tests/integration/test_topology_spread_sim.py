"""PodTopologySpread through the whole scheduler on the in-memory cluster."""

from __future__ import annotations

from collections import Counter
from typing import Any

from plugins.pod_topology_spread import SPEC
from scheduler.framework import PluginSpec
from scheduler.objects.node import ZONE_LABEL
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

CONFIG: dict[str, Any] = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "PodTopologySpread", "weight": 2}]}},
        }
    ]
}


def _extra_plugins() -> list[PluginSpec]:
    # Registered by its entry point once installed that way; otherwise given here.
    return [] if SPEC.name in PluginRegistry.discover() else [SPEC]


def _spread_pod(name: str, **constraint: Any) -> dict[str, Any]:
    return (
        make_pod(name)
        .label("app", "web")
        .req(cpu="100m")
        .spec(
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE_LABEL,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    **constraint,
                }
            ]
        )
        .dict()
    )


async def test_thirty_pods_spread_ten_per_zone() -> None:
    async with Harness(CONFIG, extra_plugins=_extra_plugins()) as h:
        profile = h.scheduler.profiles["default-scheduler"]
        assert "PodTopologySpread" in [entry.plugin.name for entry in profile.filter]
        nodes = [
            make_node(f"{zone}-{i}").zone(zone).capacity(cpu="4", memory="8Gi", pods="110").dict()
            for zone in ("a", "b", "c")
            for i in range(10)
        ]
        h.create([*nodes, *(_spread_pod(f"web-{i}") for i in range(30))])
        assert await h.schedule_active() == 30
        placed = [h.node_of("default", f"web-{i}") for i in range(30)]
        assert None not in placed
        per_zone = Counter(str(node).split("-")[0] for node in placed)
        assert per_zone == {"a": 10, "b": 10, "c": 10}


async def test_a_tainted_zone_blocks_spreading_unless_taints_are_honoured() -> None:
    nodes = [
        make_node("a-0").zone("a").dict(),
        make_node("a-1").zone("a").dict(),
        make_node("b-0").zone("b").taint("dedicated", "infra").dict(),
    ]
    async with Harness(CONFIG, extra_plugins=_extra_plugins()) as h:
        h.create([*nodes, _spread_pod("first"), _spread_pod("second")])
        await h.schedule_active()
        # Zone b counts as an empty domain, so a second pod in zone a would skew it by 2.
        placed = {name: h.node_of("default", name) for name in ("first", "second")}
        scheduled = [name for name, node in placed.items() if node is not None]
        assert len(scheduled) == 1
        assert placed[scheduled[0]] in {"a-0", "a-1"}
        (stuck,) = set(placed) - set(scheduled)
        notes = h.event_notes("default", stuck, "FailedScheduling")
        assert notes
        assert notes[-1].startswith("0/3 nodes are available: ")
        assert "2 node(s) didn't match pod topology spread constraints" in notes[-1]
    async with Harness(CONFIG, extra_plugins=_extra_plugins()) as h:
        honouring = [_spread_pod(name, nodeTaintsPolicy="Honor") for name in ("first", "second")]
        h.create([*nodes, *honouring])
        await h.schedule_active()
        assert {h.node_of("default", "first"), h.node_of("default", "second")} == {"a-0", "a-1"}
