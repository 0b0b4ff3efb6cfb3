"""DeviceTaintRules: a rule's taint lands on the devices its selector picks (by driver, pool and
device name, each optional), and DynamicResources then reads it as a taint the driver wrote."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.dynamic_resources.taint_rules import with_rule_taints
from scheduler.framework import Code
from scheduler.framework import Pod
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_device_taint_rule
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import tainted
from scheduler.testing.dra_builders import with_claims
from tests.plugins.dra_world import CLASS
from tests.plugins.dra_world import DRIVER
from tests.plugins.dra_world import World

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
FAULTY = {"key": "example.com/faulty", "value": "ecc", "effect": "NoSchedule"}
DRIVER_SET = {"key": "gpu.example.com/unhealthy", "effect": "NoExecute"}


def _taints(slices: list[Any]) -> dict[tuple[str, str], list[str]]:
    """(pool, device) -> the keys of its taints, in order."""
    return {
        (s["spec"]["pool"]["name"], d["name"]): [t["key"] for t in d.get("taints") or ()]
        for s in slices
        for d in s["spec"]["devices"]
    }


SLICES = [
    make_slice("a", DRIVER, [device("gpu-0"), device("gpu-1")], node="node-a"),
    make_slice("b", DRIVER, [tainted(device("gpu-0"), DRIVER_SET)], node="node-b"),
    make_slice("c", "nic.example.com", [device("nic-0")], node="node-a", pool="nics-a"),
]
EVERY_DEVICE = {("node-a", "gpu-0"), ("node-a", "gpu-1"), ("node-b", "gpu-0"), ("nics-a", "nic-0")}


@pytest.mark.parametrize(
    ("selector", "tainted_devices"),
    [
        ({"driver": DRIVER}, {("node-a", "gpu-0"), ("node-a", "gpu-1"), ("node-b", "gpu-0")}),
        ({"pool": "node-a"}, {("node-a", "gpu-0"), ("node-a", "gpu-1")}),
        ({"device": "gpu-1"}, {("node-a", "gpu-1")}),
        ({"driver": DRIVER, "pool": "node-a", "device": "gpu-0"}, {("node-a", "gpu-0")}),
        ({"driver": "other.example.com"}, set()),
        ({"driver": "nic.example.com"}, {("nics-a", "nic-0")}),
        # An empty selector, and no selector at all, pick every device (as upstream's tracker).
        ({}, EVERY_DEVICE),
        (None, EVERY_DEVICE),
    ],
)
def test_a_rule_taints_exactly_the_devices_its_selector_picks(
    selector: dict[str, str] | None, tainted_devices: set[tuple[str, str]]
) -> None:
    rule = make_device_taint_rule("r", FAULTY, **(selector or {}), selector=selector is not None)
    patched = _taints(with_rule_taints(SLICES, [rule]))
    assert {device for device, keys in patched.items() if FAULTY["key"] in keys} == tainted_devices


def test_rule_taints_follow_the_drivers_own_and_untouched_slices_stay_the_same_objects() -> None:
    rules = [
        make_device_taint_rule("r1", FAULTY, pool="node-b"),
        make_device_taint_rule("r2", {**FAULTY, "key": "example.com/drain"}, pool="node-b"),
    ]
    patched = with_rule_taints(SLICES, rules)
    assert _taints(patched)[("node-b", "gpu-0")] == [
        DRIVER_SET["key"],
        "example.com/faulty",
        "example.com/drain",
    ]
    assert patched[0] is SLICES[0] and patched[2] is SLICES[2]
    # The informer's objects are left as they were.
    assert _taints(SLICES)[("node-b", "gpu-0")] == [DRIVER_SET["key"]]


def pod_using(claim: str) -> Pod:
    return Pod.from_dict(with_claims(make_pod("p").uid("pod-uid").dict(), claims={claim: claim}))


def _world(*objects: dict[str, Any], tolerations: list[dict[str, str]] | None = None) -> World:
    slices = [
        make_slice("a", DRIVER, [device("gpu-a")], node="node-a"),
        make_slice("b", DRIVER, [device("gpu-b")], node="node-b"),
    ]
    claim = make_claim("c").request("gpu", CLASS, tolerations=tolerations).dict()
    return World([GPU_CLASS, *slices, claim, *objects], nodes=("node-a", "node-b"))


def test_a_device_a_rule_taints_is_kept_from_a_request_that_does_not_tolerate_it() -> None:
    world = _world(make_device_taint_rule("faulty-gpu-a", FAULTY, device="gpu-a"))
    _, statuses = world.filter(pod_using("c"))
    assert statuses["node-a"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert statuses["node-a"].message() == "cannot allocate all claims"
    assert statuses["node-b"].is_success


def test_a_request_tolerating_the_rules_taint_may_have_the_device() -> None:
    tolerate = [{"key": FAULTY["key"], "operator": "Exists"}]
    world = _world(
        make_device_taint_rule("faulty-gpu-a", FAULTY, device="gpu-a"), tolerations=tolerate
    )
    _, statuses = world.filter(pod_using("c"))
    assert statuses["node-a"].is_success


def test_a_rule_with_effect_none_keeps_no_device_from_anyone() -> None:
    world = _world(make_device_taint_rule("note", {**FAULTY, "effect": "None"}))
    _, statuses = world.filter(pod_using("c"))
    assert statuses["node-a"].is_success and statuses["node-b"].is_success


async def test_deleting_the_rule_gives_the_device_back() -> None:
    world = _world(make_device_taint_rule("faulty-gpu-a", FAULTY, device="gpu-a"))
    assert not world.filter(pod_using("c"))[1]["node-a"].is_success
    await world.sim.delete("devicetaintrules", "", "faulty-gpu-a")
    assert world.filter(pod_using("c"))[1]["node-a"].is_success
