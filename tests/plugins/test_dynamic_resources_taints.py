"""Device taints: a NoSchedule or NoExecute taint keeps a device from every request that does
not tolerate it; other effects keep it from none. The tolerations go into the allocation."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.dynamic_resources.device_taints import read_tolerations
from plugins.dynamic_resources.device_taints import taint_blocks
from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import StateData
from scheduler.framework import Code
from scheduler.framework import Pod
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import tainted
from scheduler.testing.dra_builders import with_claims
from tests.plugins.dra_world import CLASS
from tests.plugins.dra_world import DRIVER
from tests.plugins.dra_world import World

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
UNHEALTHY = {"key": "gpu.example.com/unhealthy", "value": "ecc", "effect": "NoSchedule"}


def pod_using(claim: str) -> Pod:
    return Pod.from_dict(with_claims(make_pod("p").uid("pod-uid").dict(), claims={claim: claim}))


@pytest.mark.parametrize(
    ("taint", "tolerations", "blocks"),
    [
        (UNHEALTHY, [], True),
        ({**UNHEALTHY, "effect": "NoExecute"}, [], True),
        ({**UNHEALTHY, "effect": "None"}, [], False),
        ({**UNHEALTHY, "effect": "SomeFutureEffect"}, [], False),
        (UNHEALTHY, [{"key": UNHEALTHY["key"], "operator": "Exists"}], False),
        (UNHEALTHY, [{"key": UNHEALTHY["key"], "operator": "Equal", "value": "ecc"}], False),
        (UNHEALTHY, [{"key": UNHEALTHY["key"], "value": "ecc"}], False),
        (UNHEALTHY, [{"key": UNHEALTHY["key"], "operator": "Equal", "value": "other"}], True),
        (UNHEALTHY, [{"operator": "Exists"}], False),
        (UNHEALTHY, [{"operator": "Exists", "effect": "NoExecute"}], True),
        (UNHEALTHY, [{"key": "other", "operator": "Exists"}], True),
        (UNHEALTHY, [{"key": UNHEALTHY["key"], "operator": "Lt", "value": "ecc"}], True),
    ],
)
def test_taint_and_toleration_matching(
    taint: dict[str, str], tolerations: list[dict[str, Any]], blocks: bool
) -> None:
    assert taint_blocks({"taints": [taint]}, read_tolerations(tolerations)) is blocks


def _world(*claims: dict[str, Any]) -> World:
    slices = [
        make_slice("a", DRIVER, [tainted(device("gpu-a"), UNHEALTHY)], node="tainted"),
        make_slice("b", DRIVER, [device("gpu-b")], node="healthy"),
    ]
    return World([GPU_CLASS, *slices, *claims], nodes=("tainted", "healthy"))


def test_a_tainted_device_is_not_offered_to_an_untolerating_request() -> None:
    world = _world(make_claim("c").request("gpu", CLASS).dict())
    _, statuses = world.filter(pod_using("c"))
    assert statuses["healthy"].is_success
    assert statuses["tainted"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert statuses["tainted"].message() == "cannot allocate all claims"


def test_a_tolerating_request_gets_the_device_and_the_allocation_keeps_its_tolerations() -> None:
    tolerate = [{"key": UNHEALTHY["key"], "operator": "Exists", "effect": "NoSchedule"}]
    world = _world(make_claim("c").request("gpu", CLASS, tolerations=tolerate).dict())
    _, statuses = world.filter(pod_using("c"))
    assert statuses["tainted"].is_success
    state = world.reserve(pod_using("c"), "tainted")
    allocations = state.read(STATE_KEY, StateData).allocations
    [result] = allocations["uid-claim-default-c"]["devices"]["results"]
    assert (result["device"], result["tolerations"]) == ("gpu-a", tolerate)


def test_asking_for_all_devices_fails_on_a_node_with_an_untolerated_tainted_one() -> None:
    # As a device another claim holds, a tainted device cannot be given: "All" fails there
    # rather than taking only the untainted ones.
    slices = [
        make_slice(
            "a", DRIVER, [tainted(device("gpu-0"), UNHEALTHY), device("gpu-1")], node="tainted"
        ),
        make_slice("b", DRIVER, [device("gpu-2")], node="healthy"),
    ]
    claim = make_claim("c").request("gpu", CLASS, all_devices=True).dict()
    world = World([GPU_CLASS, *slices, claim], nodes=("tainted", "healthy"))
    _, statuses = world.filter(pod_using("c"))
    assert statuses["healthy"].is_success
    assert statuses["tainted"].message() == "cannot allocate all claims"


def test_a_tainted_device_does_not_count_as_free() -> None:
    # Two devices asked for, one of them tainted: the node cannot give two.
    slices = [
        make_slice(
            "a", DRIVER, [tainted(device("gpu-0"), UNHEALTHY), device("gpu-1")], node="tainted"
        ),
        make_slice("b", DRIVER, [device("gpu-2"), device("gpu-3")], node="healthy"),
    ]
    claim = make_claim("c").request("gpu", CLASS, count=2).dict()
    world = World([GPU_CLASS, *slices, claim], nodes=("tainted", "healthy"))
    _, statuses = world.filter(pod_using("c"))
    assert statuses["healthy"].is_success
    assert statuses["tainted"].message() == "cannot allocate all claims"
