"""End to end in the simulator: a pod whose claim waits for its first consumer lands where the
only matching PV is, and the PV controller finishes the binding the scheduler started."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import plugins.node_volume_limits
import plugins.volume_binding
import plugins.volume_restrictions
import plugins.volume_zone
from scheduler.cluster.sim.pv_controller import PVBinderController
from scheduler.config.feature_gates import FeatureGates
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_csi_driver
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_capacity
from scheduler.testing.storage_builders import make_storage_class
from tests.integration.harness import Harness

SPECS = [
    plugins.volume_restrictions.SPEC,
    plugins.node_volume_limits.SPEC,
    plugins.volume_binding.SPEC,
    plugins.volume_zone.SPEC,
]
CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": spec.name} for spec in SPECS]}},
        }
    ]
}

OBJECTS = [
    *(make_node(f"n-{zone}").zone(zone).dict() for zone in ("a", "b", "c")),
    make_storage_class("local", "kubernetes.io/no-provisioner").wait_for_first_consumer().dict(),
    # Too small, in zone c; the only volume that fits is in zone b.
    make_pv("pv-small").storage_class("local").capacity("1Gi").zone("c").dict(),
    make_pv("pv-b").storage_class("local").capacity("10Gi").zone("b").dict(),
    make_pvc("data").storage_class("local").request("5Gi").dict(),
    make_pod("web").spec(volumes=[claim_volume("data")]).dict(),
]


def _named(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(o for o in objects if o["metadata"]["name"] == name)


async def _yield(times: int = 50) -> None:
    for _ in range(times):
        await asyncio.sleep(0)


async def _schedule_web_until_bound(h: Harness) -> None:
    """Schedule the pod `web`; PreBind checks once a second until the PV controller has bound
    its claim, so the clock moves a second at a time until the pod is bound (or ten passed)."""
    info = h.scheduler.queue.pop()
    assert info is not None
    h.scheduler.schedule_one(info)
    for _ in range(10):
        await _yield()
        if h.node_of("default", "web"):
            break
        h.clock.advance(1)
    await h.quiesce()


async def test_a_waiting_claim_binds_to_the_only_matching_volume_and_the_pod_follows() -> None:
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        controller = asyncio.create_task(PVBinderController(h.sim).run())
        try:
            h.create(OBJECTS)
            # The controller makes the new PVs Available before the pod is scheduled.
            for _ in range(100):
                await h.quiesce()
                volumes = h.sim.objects("persistentvolumes")
                if all(v["status"].get("phase") == "Available" for v in volumes):
                    break
            await h.quiesce()
            assert h.scheduler.queue.pending_counts().get("active") == 1

            await _schedule_web_until_bound(h)

            assert h.node_of("default", "web") == "n-b"
            pvc = _named(h.sim.objects("persistentvolumeclaims"), "data")
            assert pvc["spec"]["volumeName"] == "pv-b"
            assert pvc["status"]["phase"] == "Bound"
            pv = _named(h.sim.objects("persistentvolumes"), "pv-b")
            assert pv["status"]["phase"] == "Bound"
            assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
            assert _named(h.sim.objects("persistentvolumes"), "pv-small")["status"]["phase"] == (
                "Available"
            )
            assert h.event_notes("default", "web", "Scheduled") == [
                "Successfully assigned default/web to n-b"
            ]
        finally:
            controller.cancel()
            await asyncio.gather(controller, return_exceptions=True)


async def test_without_a_matching_volume_the_pod_stays_pending_with_the_reasons() -> None:
    objects = [o for o in OBJECTS if o["metadata"]["name"] != "pv-b"]
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        controller = asyncio.create_task(PVBinderController(h.sim).run())
        try:
            h.create(objects)
            await h.quiesce()
            await _yield()
            await h.quiesce()
            assert await h.schedule_active() == 1
            assert h.node_of("default", "web") is None
            (note,) = h.event_notes("default", "web", "FailedScheduling")
            # (followed by what preemption has to say, when the profile has a PostFilter)
            assert note.startswith(
                "0/3 nodes are available: 3 node(s) didn't find available persistent volumes "
                "to bind."
            )
        finally:
            controller.cancel()
            await asyncio.gather(controller, return_exceptions=True)


async def test_a_pod_waiting_for_its_claim_is_requeued_when_the_claim_is_bound() -> None:
    immediate = make_storage_class("std", "kubernetes.io/no-provisioner").dict()
    async with Harness(CONFIG, extra_plugins=SPECS) as h:
        controller = asyncio.create_task(PVBinderController(h.sim).run())
        try:
            h.create(
                [
                    make_node("n-a").zone("a").dict(),
                    immediate,
                    make_pv("pv-a").storage_class("std").capacity("1Gi").zone("a").dict(),
                    make_pod("web").spec(volumes=[claim_volume("late")]).dict(),
                ]
            )
            assert await h.schedule_active() == 1
            (note,) = h.event_notes("default", "web", "FailedScheduling")
            assert note.startswith(
                '0/1 nodes are available: persistentvolumeclaim "late" not found.'
            )
            assert h.scheduler.queue.locate("default/web") == "unschedulable"

            # The claim appears; the PV controller binds it (Immediate class), and the claim
            # events pass the plugins' hints: the pod goes back to the queue.
            h.create([make_pvc("late").storage_class("std").request("1Gi").dict()])
            for _ in range(20):
                await h.quiesce()
                claim = _named(h.sim.objects("persistentvolumeclaims"), "late")
                if claim["status"]["phase"] == "Bound":
                    break
            await h.quiesce()
            assert h.scheduler.queue.locate("default/web") in {"backoff", "active"}
            h.clock.advance(10)
            h.scheduler.queue.flush_backoff_completed()
            assert await h.schedule_active() == 1
            assert h.node_of("default", "web") == "n-a"
        finally:
            controller.cancel()
            await asyncio.gather(controller, return_exceptions=True)


TRACKED = "tracked.csi.example.com"


@pytest.mark.parametrize(
    ("shape", "chosen"),
    [
        pytest.param(None, "n-b", id="default-shape-emptiest-pool"),
        pytest.param(
            [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
            "n-a",
            id="bin-packing-fullest-pool",
        ),
    ],
)
async def test_under_storage_capacity_scoring_the_pool_decides_the_node(
    shape: list[dict[str, int]] | None, chosen: str
) -> None:
    # The whole default profile; the nodes differ only in their pool of the claim's class.
    config: dict[str, Any] = {"profiles": [{"schedulerName": "default-scheduler"}]}
    if shape is not None:
        args = {"name": "VolumeBinding", "args": {"shape": shape}}
        config["profiles"][0]["pluginConfig"] = [args]
    gates = FeatureGates({"StorageCapacityScoring": True})
    async with Harness(config, features=gates) as h:
        controller = asyncio.create_task(PVBinderController(h.sim).run())
        try:
            h.create(
                [
                    *(make_node(f"n-{zone}").zone(zone).dict() for zone in ("a", "b", "c")),
                    make_storage_class("tracked", TRACKED).wait_for_first_consumer().dict(),
                    make_csi_driver(TRACKED, storage_capacity=True),
                    *(
                        make_storage_capacity(f"pool-{zone}", "tracked", size, zone=zone)
                        for zone, size in (("a", "10Gi"), ("b", "100Gi"), ("c", "50Gi"))
                    ),
                    make_pvc("data").storage_class("tracked").request("5Gi").dict(),
                    make_pod("web").spec(volumes=[claim_volume("data")]).dict(),
                ]
            )
            await h.quiesce()
            await _schedule_web_until_bound(h)

            assert h.node_of("default", "web") == chosen
            pvc = _named(h.sim.objects("persistentvolumeclaims"), "data")
            assert pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == chosen
            assert pvc["status"]["phase"] == "Bound"
        finally:
            controller.cancel()
            await asyncio.gather(controller, return_exceptions=True)
