"""Consumable capacity and distinct attributes in DynamicResources: requests for an amount of a
device's capacity, devices shared by several claims, and kube-scheduler v1.36's outcomes."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import StateData
from scheduler.framework import Pod
from scheduler.objects.quantity import parse_quantity
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import consuming
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_counter_slice
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import with_claims
from tests.plugins.dra_world import CLASS
from tests.plugins.dra_world import DRIVER
from tests.plugins.dra_world import World
from tests.plugins.dra_world import outcome
from tests.plugins.dra_world import unresolvable

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
CANNOT_ALLOCATE = unresolvable("cannot allocate all claims")
# A NIC's 10G of bandwidth is handed out in whole steps of 1G from 1G, 1G unless asked
# otherwise, and at most 8G to one share.
BANDWIDTH_POLICY = {"default": "1G", "validRange": {"min": "1G", "step": "1G", "max": "8G"}}


def nic(name: str = "nic-0", **extra: Any) -> dict[str, Any]:
    found = device(name, kind="nic")
    found["allowMultipleAllocations"] = True
    found["capacity"] = {"bandwidth": {"value": "10G", "requestPolicy": BANDWIDTH_POLICY}}
    return {**found, **extra}


NICS = make_slice("worker-nics", DRIVER, [nic()], node="worker")


def pod_using(*claims: str) -> Pod:
    raw = with_claims(make_pod("p").uid("pod-uid").dict(), claims={c: c for c in claims})
    return Pod.from_dict(raw)


def asking(bandwidth: str | None = None, name: str = "c", count: int = 1) -> dict[str, Any]:
    claim = make_claim(name).request("req-1", CLASS, count).dict()
    if bandwidth is not None:
        exactly = claim["spec"]["devices"]["requests"][0]["exactly"]
        exactly["capacity"] = {"requests": {"bandwidth": bandwidth}}
    return claim


def share_held(name: str, bandwidth: str, device_name: str = "nic-0") -> dict[str, Any]:
    """A claim of another workload holding one share of a worker device."""
    claim = make_claim(name).request("req-1", CLASS)
    claim.allocated("worker", ("req-1", DRIVER, "worker", device_name))
    raw = claim.dict()
    [result] = raw["status"]["allocation"]["devices"]["results"]
    result["shareID"] = f"share-{name}"
    result["consumedCapacity"] = {"bandwidth": bandwidth}
    return raw


def results(world: World, pod: Pod, claim: str = "c") -> list[dict[str, Any]]:
    data = world.reserve(pod, "worker").read(STATE_KEY, StateData)
    found: list[dict[str, Any]] = data.allocations[f"uid-claim-default-{claim}"]["devices"][
        "results"
    ]
    return found


def consumed(result: dict[str, Any]) -> dict[str, Fraction]:
    return {k: parse_quantity(v) for k, v in result["consumedCapacity"].items()}


def test_a_share_takes_what_it_asks_rounded_up_to_the_next_step() -> None:
    world = World([GPU_CLASS, NICS, share_held("a", "4G"), share_held("b", "2G"), asking("2.5G")])
    [result] = results(world, pod_using("c"))
    assert result["device"] == "nic-0"
    assert consumed(result) == {"bandwidth": Fraction(3 * 10**9)}
    assert result["shareID"] and result["shareID"] not in ("share-a", "share-b")


def test_a_share_without_an_amount_takes_the_policy_default() -> None:
    world = World([GPU_CLASS, NICS, asking()])
    [result] = results(world, pod_using("c"))
    assert consumed(result) == {"bandwidth": Fraction(10**9)}


def test_the_shares_held_bound_what_is_left() -> None:
    world = World([GPU_CLASS, NICS, share_held("a", "4G"), share_held("b", "2G"), asking("5G")])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE


def test_an_amount_past_the_policy_or_of_a_capacity_the_device_lacks_is_refused() -> None:
    for bad in (asking("9G"), _asking_for("memory", "1Gi")):
        world = World([GPU_CLASS, NICS, bad])
        _, statuses = world.filter(pod_using("c"))
        assert outcome(statuses["worker"]) == CANNOT_ALLOCATE


def _asking_for(capacity: str, amount: str) -> dict[str, Any]:
    claim = asking()
    exactly = claim["spec"]["devices"]["requests"][0]["exactly"]
    exactly["capacity"] = {"requests": {capacity: amount}}
    return claim


def test_two_requests_of_one_pod_add_up_on_a_shared_device() -> None:
    claim = make_claim("c").request("a", CLASS).request("b", CLASS).dict()
    for request in claim["spec"]["devices"]["requests"]:
        request["exactly"]["capacity"] = {"requests": {"bandwidth": "3G"}}
    held = share_held("other", "5G")
    world = World([GPU_CLASS, NICS, held, claim])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE
    world = World([GPU_CLASS, NICS, share_held("other", "4G"), claim])
    found = results(world, pod_using("c"))
    assert [r["device"] for r in found] == ["nic-0", "nic-0"]
    assert found[0]["shareID"] != found[1]["shareID"]


def test_a_dedicated_device_is_checked_against_its_capacity_but_records_no_share() -> None:
    gpu = device("gpu-0", capacity={"memory": "40Gi"})
    slice_ = make_slice("worker-gpus", DRIVER, [gpu], node="worker")
    too_much = _asking_for("memory", "50Gi")
    world = World([GPU_CLASS, slice_, too_much])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE
    world = World([GPU_CLASS, slice_, _asking_for("memory", "30Gi")])
    [result] = results(world, pod_using("c"))
    assert "shareID" not in result and "consumedCapacity" not in result


def test_a_shared_device_draws_on_its_counters_once() -> None:
    counters = make_counter_slice("worker-counters", DRIVER, "worker", {"card": {"mem": "40Gi"}})
    shared = consuming(nic(), "card", mem="30Gi")
    other = consuming(device("gpu-0", kind="gpu"), "card", mem="20Gi")
    slice_ = make_slice("worker-devs", DRIVER, [shared, other], node="worker", slice_count=2)
    held = share_held("other", "1G")
    wants_gpu = make_claim("c").request("req-1", CLASS, selectors=(_kind("gpu"),)).dict()
    world = World([GPU_CLASS, counters, slice_, held, wants_gpu])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE
    # A further share of the NIC draws nothing more, so it still fits.
    wants_nic = make_claim("c").request("req-1", CLASS, selectors=(_kind("nic"),)).dict()
    world = World([GPU_CLASS, counters, slice_, held, wants_nic])
    [result] = results(world, pod_using("c"))
    assert result["device"] == "nic-0"


def _kind(kind: str) -> str:
    return f'device.attributes["{DRIVER}"].kind == "{kind}"'


def test_selectors_see_whether_a_device_may_be_shared() -> None:
    gpu = device("gpu-0", kind="gpu")
    slice_ = make_slice("worker-devs", DRIVER, [gpu, nic()], node="worker")
    claim = make_claim("c").request("req-1", CLASS, selectors=("device.allowMultipleAllocations",))
    world = World([GPU_CLASS, slice_, claim.dict()])
    [result] = results(world, pod_using("c"))
    assert result["device"] == "nic-0"


def test_distinct_attribute_spreads_requests_over_values() -> None:
    gpus = [device(f"gpu-{i}", model=m) for i, m in enumerate(("a100", "a100", "t4"))]
    slice_ = make_slice("worker-gpus", DRIVER, gpus, node="worker")
    claim = make_claim("c").request("a", CLASS).request("b", CLASS).dict()
    claim["spec"]["devices"]["constraints"] = [{"distinctAttribute": f"{DRIVER}/model"}]
    world = World([GPU_CLASS, slice_, claim])
    assert [r["device"] for r in results(world, pod_using("c"))] == ["gpu-0", "gpu-2"]
    same = make_slice("worker-gpus", DRIVER, gpus[:2], node="worker")
    world = World([GPU_CLASS, same, claim])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == CANNOT_ALLOCATE
