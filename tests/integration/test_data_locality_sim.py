"""DataLocality in the whole scheduler: a pod follows its volume's zone while there is room
there, and stays in the volume's region when there is not."""

from __future__ import annotations

from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from tests.integration.harness import Harness

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
# The volume is network-attached: reachable from any node, so no Filter pins the pod (and
# VolumeZone, which would, is off); only DataLocality knows where the bytes are.
CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": "DataLocality", "weight": 5}],
                    "disabled": [{"name": "VolumeZone"}],
                }
            },
        }
    ]
}


def _objects(room_in_b: bool) -> list[dict[str, Any]]:
    busy = "4" if not room_in_b else "0"
    return [
        make_node("n-a").zone("a", "r1").dict(),
        make_node("n-b").zone("b", "r1").dict(),
        make_node("n-c").zone("c", "r2").dict(),
        make_pod("filler").node("n-b").req(cpu=busy).dict(),
        make_pv("pv-b").capacity("50Gi").label(ZONE, "b").label(REGION, "r1").dict(),
        make_pvc("data").bound_to("pv-b").dict(),
        make_pod("reader").req(cpu="1").spec(volumes=[claim_volume("data")]).dict(),
    ]


async def test_a_pod_whose_claim_is_bound_in_zone_b_lands_in_zone_b() -> None:
    async with Harness(CONFIG) as h:
        h.create(_objects(room_in_b=True))
        assert await h.schedule_active() == 1
        assert h.node_of("default", "reader") == "n-b"


async def test_with_zone_b_full_the_pod_stays_in_the_volume_region() -> None:
    async with Harness(CONFIG) as h:
        h.create(_objects(room_in_b=False))
        assert await h.schedule_active() == 1
        assert h.node_of("default", "reader") == "n-a"
