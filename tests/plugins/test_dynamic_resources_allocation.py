"""DynamicResources: what gets allocated (firstAvailable, matchAttribute, config), Score, and
Reserve keeping two pods in flight off one device."""

from __future__ import annotations

from typing import Any

from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import StateData
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import with_claims
from tests.plugins.dra_world import CLASS
from tests.plugins.dra_world import DRIVER
from tests.plugins.dra_world import World
from tests.plugins.dra_world import outcome
from tests.plugins.dra_world import unresolvable

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
BIG_CLASS = make_device_class(
    "big-gpu",
    f'device.driver == "{DRIVER}"',
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
    config={"mode": "exclusive"},
)


def gpus(node: str, *specs: tuple[str, str, str]) -> dict[str, Any]:
    """Devices as (name, memory, pcie root)."""
    return make_slice(
        f"{node}-gpus",
        DRIVER,
        [device(n, capacity={"memory": m}, pcieRoot=r) for n, m, r in specs],
        node=node,
    )


def pod(name: str = "p", *claims: str) -> Pod:
    raw = with_claims(make_pod(name).uid(f"{name}-uid").dict(), claims={c: c for c in claims})
    return Pod.from_dict(raw)


def allocation(state: CycleState, claim: str = "c") -> dict[str, Any]:
    return state.read(STATE_KEY, StateData).allocations[f"uid-claim-default-{claim}"]


def test_allocation_result_names_devices_node_and_config() -> None:
    claim = make_claim("c").request("gpu", "big-gpu").config(DRIVER, {"x": 1}, "gpu")
    world = World(
        [BIG_CLASS, gpus("worker", ("g0", "16Gi", "r0"), ("g1", "80Gi", "r0")), claim.dict()]
    )
    state = world.reserve(pod("p", "c"), "worker")
    assert allocation(state) == {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": "worker", "device": "g1"}],
            "config": [
                {
                    "source": "FromClass",
                    "requests": ["gpu"],
                    "opaque": {"driver": "big-gpu", "parameters": {"mode": "exclusive"}},
                },
                {
                    "source": "FromClaim",
                    "requests": ["gpu"],
                    "opaque": {"driver": DRIVER, "parameters": {"x": 1}},
                },
            ],
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker"]}]}
            ]
        },
    }


def test_first_available_prefers_earlier_alternatives_and_scores_them() -> None:
    claim = make_claim("c").first_available("gpu", ("big", "big-gpu", 1), ("any", CLASS, 1))
    world = World(
        [
            GPU_CLASS,
            BIG_CLASS,
            gpus("small", ("g0", "16Gi", "r0")),
            gpus("large", ("g0", "80Gi", "r0")),
            claim.dict(),
        ],
        nodes=("small", "large"),
    )
    state, statuses = world.filter(pod("p", "c"))
    assert statuses["small"].is_success and statuses["large"].is_success
    info = {i.name: i for i in world.table.node_infos}
    # Upstream's Score: 8 - index of the alternative chosen.
    assert world.plugin.score(state, pod("p", "c"), info["large"])[0] == 8
    assert world.plugin.score(state, pod("p", "c"), info["small"])[0] == 7
    scores = world.plugin.score_nodes(state, pod("p", "c"), world.table, world.table.all_rows())
    assert scores.tolist() == [7, 8]
    assert world.plugin.reserve(state, pod("p", "c"), "small").is_success
    assert allocation(state)["devices"]["results"][0]["request"] == "gpu/any"


def test_match_attribute_needs_two_devices_on_one_pcie_root() -> None:
    claim = make_claim("c").request("gpu", CLASS, 2).match_attribute(f"{DRIVER}/pcieRoot")
    world = World(
        [
            GPU_CLASS,
            gpus("split", ("g0", "80Gi", "r0"), ("g1", "80Gi", "r1")),
            gpus("paired", ("g0", "80Gi", "r0"), ("g1", "80Gi", "r1"), ("g2", "80Gi", "r1")),
            claim.dict(),
        ],
        nodes=("split", "paired"),
    )
    state, statuses = world.filter(pod("p", "c"))
    assert outcome(statuses["split"]) == unresolvable("cannot allocate all claims")
    assert statuses["paired"].is_success
    assert world.plugin.reserve(state, pod("p", "c"), "paired").is_success
    devices = [r["device"] for r in allocation(state)["devices"]["results"]]
    assert devices == ["g1", "g2"]


def test_constraint_across_requests_of_a_claim() -> None:
    claim = (
        make_claim("c")
        .request("a", CLASS)
        .request("b", CLASS)
        .match_attribute(f"{DRIVER}/pcieRoot", "a", "b")
    )
    world = World(
        [
            GPU_CLASS,
            gpus("worker", ("g0", "1Gi", "r0"), ("g1", "1Gi", "r1"), ("g2", "1Gi", "r1")),
            claim.dict(),
        ]
    )
    state = world.reserve(pod("p", "c"), "worker")
    results = allocation(state)["devices"]["results"]
    # g0 first for "a" leaves no r0 device for "b": the search backs up to g1.
    assert [(r["request"], r["device"]) for r in results] == [("a", "g1"), ("b", "g2")]


def test_two_claims_of_one_pod_get_different_devices() -> None:
    world = World(
        [
            GPU_CLASS,
            gpus("worker", ("g0", "1Gi", "r0"), ("g1", "1Gi", "r0")),
            make_claim("c").request("gpu", CLASS).dict(),
            make_claim("d").request("gpu", CLASS).dict(),
        ]
    )
    state = world.reserve(pod("p", "c", "d"), "worker")
    first = allocation(state, "c")["devices"]["results"][0]["device"]
    second = allocation(state, "d")["devices"]["results"][0]["device"]
    assert {first, second} == {"g0", "g1"}


def test_two_pods_in_flight_never_get_one_device() -> None:
    world = World(
        [
            GPU_CLASS,
            gpus("worker", ("g0", "1Gi", "r0")),
            make_claim("c").request("gpu", CLASS).dict(),
            make_claim("d").request("gpu", CLASS).dict(),
        ]
    )
    first = world.reserve(pod("p", "c"), "worker")
    # Nothing is written yet, but the device is taken in memory.
    _, statuses = world.filter(pod("q", "d"))
    assert outcome(statuses["worker"]) == unresolvable("cannot allocate all claims")
    world.plugin.unreserve(first, pod("p", "c"), "worker")
    _, statuses = world.filter(pod("q", "d"))
    assert statuses["worker"].is_success


def test_quantity_and_semver_helpers_in_selectors() -> None:
    versioned = make_slice(
        "worker-gpus",
        DRIVER,
        [
            device("old", driverVersion="v1.2.3"),
            device("new", driverVersion="v2.0.0-rc.1", capacity={"memory": "1.5Gi"}),
        ],
        node="worker",
    )
    selector = (
        'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.9.0")) && '
        'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("1Gi"))'
    )
    claim = make_claim("c").request("gpu", CLASS, selectors=(selector,))
    world = World([GPU_CLASS, versioned, claim.dict()])
    state = world.reserve(pod("p", "c"), "worker")
    assert allocation(state)["devices"]["results"][0]["device"] == "new"
