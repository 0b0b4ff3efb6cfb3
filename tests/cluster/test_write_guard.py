"""The write guard's forwarding: reads pass as they are, each write reaches `_guard` described
by what it writes, and the write is made only when the guard sends it."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import pytest

from scheduler.cluster.sim import SimCluster
from scheduler.cluster.write_guard import GuardedClusterAPI
from scheduler.cluster.write_guard import Write
from scheduler.framework.errors import NotFoundError
from scheduler.testing import FakeClock
from scheduler.testing import make_node
from scheduler.testing import make_pod


class _Judge(GuardedClusterAPI[SimCluster]):
    """Remembers every write it is asked about; sends it only when `allow` is set."""

    def __init__(self, api: SimCluster, *, allow: bool) -> None:
        super().__init__(api)
        self.allow = allow
        self.asked: list[Write] = []

    async def _guard(self, write: Write, send: Callable[[], Awaitable[None]]) -> None:
        self.asked.append(write)
        if self.allow:
            await send()


def _pod_manifest(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"}}


async def test_a_read_is_not_judged() -> None:
    sim = SimCluster(FakeClock())
    sim.load([_pod_manifest("p")])
    judge = _Judge(sim, allow=False)
    pod = await judge.get("pods", "ns", "p")
    assert pod["metadata"]["name"] == "p"
    assert judge.asked == []
    with pytest.raises(NotFoundError):
        await judge.get("pods", "ns", "gone")


async def test_each_write_is_described_by_what_it_writes() -> None:
    sim = SimCluster(FakeClock())
    judge = _Judge(sim, allow=False)
    await judge.bind(make_pod("p", "ns").obj(), "node-a")
    await judge.delete_pod("ns", "q", uid="u1")
    await judge.patch_pod_status("ns", "r", {"conditions": []})
    await judge.patch_object("persistentvolumeclaims", "ns", "claim", {"metadata": {}}, "status")
    assert judge.asked == [
        Write("bind", "pods", "ns", "p", "node-a"),
        Write("delete_pod", "pods", "ns", "q"),
        Write("patch_pod_status", "pods", "ns", "r"),
        Write("patch_object", "persistentvolumeclaims", "ns", "claim"),
    ]
    assert [w.key for w in judge.asked] == ["ns/p", "ns/q", "ns/r", "ns/claim"]


async def test_a_held_write_never_reaches_the_cluster() -> None:
    sim = SimCluster(FakeClock())
    sim.load([_pod_manifest("p")])
    judge = _Judge(sim, allow=False)
    await judge.delete_pod("ns", "p")
    assert [p["metadata"]["name"] for p in sim.objects("pods")] == ["p"]


async def test_a_sent_write_is_made_as_asked() -> None:
    sim = SimCluster(FakeClock())
    sim.load([make_node("node-a").dict(), _pod_manifest("p"), _pod_manifest("q")])
    judge = _Judge(sim, allow=True)
    stored = await judge.get("pods", "ns", "p")
    await judge.bind(make_pod("p", "ns").uid(stored["metadata"]["uid"]).obj(), "node-a")
    await judge.patch_object("pods", "ns", "q", {"metadata": {"labels": {"seen": "yes"}}})
    await judge.delete_pod("ns", "q")
    bound = await sim.get("pods", "ns", "p")
    assert bound["spec"]["nodeName"] == "node-a"
    assert [p["metadata"]["name"] for p in sim.objects("pods")] == ["p"]
