"""The in-memory cluster's ResourceClaim controller: claims from templates, released when
their pods go."""

from __future__ import annotations

from typing import Any

from scheduler.cluster.sim import SimCluster
from scheduler.cluster.sim.claim_controller import ResourceClaimController
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_claim_template
from scheduler.testing.dra_builders import with_claims

GPU = make_claim("gpu").request("gpu", "gpu-class")


def claim_of(sim: SimCluster, name: str) -> dict[str, Any] | None:
    return next((c for c in sim.objects("resourceclaims") if c["metadata"]["name"] == name), None)


async def test_claims_are_made_from_templates_and_recorded_in_the_pod() -> None:
    sim = SimCluster(FakeClock())
    sim.load(
        [
            make_claim_template("one-gpu", GPU),
            with_claims(make_pod("trainer").dict(), templates={"gpu": "one-gpu"}),
            with_claims(make_pod("waiting").dict(), templates={"gpu": "not-yet"}),
        ]
    )
    assert await ResourceClaimController(sim).sync() == 1
    [claim] = sim.objects("resourceclaims")
    assert claim["metadata"]["name"].startswith("trainer-gpu-")
    pods = {p["metadata"]["name"]: p for p in sim.objects("pods")}
    assert claim["metadata"]["ownerReferences"][0]["uid"] == pods["trainer"]["metadata"]["uid"]
    assert pods["trainer"]["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}
    ]
    assert claim["spec"] == GPU.dict()["spec"]
    assert "resourceClaimStatuses" not in (pods["waiting"].get("status") or {})


async def test_a_gone_pods_claims_are_released() -> None:
    sim = SimCluster(FakeClock())
    user_raw, owner_raw = sim.load(
        [
            with_claims(make_pod("user").dict(), claims={"gpu": "shared"}),
            with_claims(make_pod("owner").dict(), claims={"gpu": "owned"}),
        ]
    )
    user, owner = Pod.from_dict(user_raw), Pod.from_dict(owner_raw)
    sim.load(
        [
            make_claim("shared")
            .request("gpu", "gpu-class")
            .allocated("n1", ("gpu", "d", "n1", "g0"))
            .reserved_for(user)
            .dict(),
            make_claim("owned")
            .request("gpu", "gpu-class")
            .allocated("n1", ("gpu", "d", "n1", "g1"))
            .reserved_for(owner)
            .owned_by(owner)
            .dict(),
        ]
    )
    controller = ResourceClaimController(sim)
    for raw in (user_raw, owner_raw):
        await sim.delete_pod("default", raw["metadata"]["name"])
        await controller.pod_changed("DELETED", raw)
    released = claim_of(sim, "shared")
    assert released is not None
    assert released["status"] == {}
    # Made for the pod that is gone: the garbage collector's part.
    assert claim_of(sim, "owned") is None
