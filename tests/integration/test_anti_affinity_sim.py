"""Required anti-affinity on the hostname: at most one pod of the app per node, the rest
explained in upstream's words."""

from __future__ import annotations

from collections import Counter

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

HOSTNAME = "kubernetes.io/hostname"


async def test_one_pod_per_node_and_the_rest_explained() -> None:
    nodes = [make_node(f"n{i}").dict() for i in range(5)]
    pods = [
        make_pod(f"web-{i}")
        .label("app", "web")
        .req(cpu="100m")
        .pod_affinity("required", HOSTNAME, {"app": "web"}, anti=True)
        .dict()
        for i in range(8)
    ]
    async with Harness() as h:
        h.create([*nodes, *pods])
        await h.schedule_active()
        placed = [h.node_of("default", f"web-{i}") for i in range(8)]
        per_node = Counter(n for n in placed if n)
        assert sorted(per_node) == [f"n{i}" for i in range(5)]
        assert set(per_node.values()) == {1}
        left = [f"web-{i}" for i, n in enumerate(placed) if n is None]
        assert len(left) == 3
        for name in left:
            assert h.event_notes("default", name, "FailedScheduling") == [
                "0/5 nodes are available: 5 node(s) didn't match pod anti-affinity rules. "
                "no new claims to deallocate, "
                "preemption: 0/5 nodes are available: 5 No preemption victims found for "
                "incoming pod."
            ]


async def test_an_unrelated_pod_still_fits_beside_them() -> None:
    async with Harness() as h:
        h.create(
            [
                make_node("only").dict(),
                make_pod("web")
                .label("app", "web")
                .pod_affinity("required", HOSTNAME, {"app": "web"}, anti=True)
                .dict(),
                make_pod("db").label("app", "db").dict(),
            ]
        )
        await h.schedule_active()
        assert h.node_of("default", "web") == "only"
        assert h.node_of("default", "db") == "only"
