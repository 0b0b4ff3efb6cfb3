"""DynamicResources: what an allocation records, as upstream's allocator writes it: at most 32
device results per claim, the configuration of classes and claim, and Score counting claims
allocated already."""

from __future__ import annotations

from typing import Any

from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import StateData
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import ClaimBuilder
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
# Matches no device of the tests' driver.
NONE_CLASS = make_device_class("none", 'device.driver == "other.example.com"')
BIG = {"mode": "exclusive"}
BIG_CLASS = make_device_class(
    "big-gpu",
    f'device.driver == "{DRIVER}"',
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
    config=BIG,
)
SHARED_CLASS = make_device_class("shared-gpu", f'device.driver == "{DRIVER}"', config={"x": 1})


def gpus(node: str, count: int, memory: str = "16Gi") -> dict[str, Any]:
    return make_slice(
        f"{node}-gpus",
        DRIVER,
        [device(f"g{i}", capacity={"memory": memory}) for i in range(count)],
        node=node,
    )


def pod(*claims: str) -> Pod:
    raw = with_claims(make_pod("p").uid("p-uid").dict(), claims={c: c for c in claims})
    return Pod.from_dict(raw)


def allocation(state: CycleState, claim: str = "c") -> dict[str, Any]:
    return state.read(STATE_KEY, StateData).allocations[f"uid-claim-default-{claim}"]


def error(message: str) -> tuple[Code, str]:
    return (Code.ERROR, message)


def opaque(driver: str, parameters: Any) -> dict[str, Any]:
    return {"opaque": {"driver": driver, "parameters": parameters}}


# ---- The limit of 32 results per claim --------------------------------------------------


def test_a_count_past_the_limit_is_an_error_on_every_node() -> None:
    world = World(
        [GPU_CLASS, gpus("worker", 40), make_claim("c").request("gpu", CLASS, 33).dict()],
        nodes=("worker", "empty"),
    )
    _, statuses = world.filter(pod("c"))
    expected = error(
        "claim default/c: number of requested devices 33 exceeds the claim limit of 32"
    )
    # Decided before any device is looked at, so even a node without devices says so.
    assert outcome(statuses["worker"]) == expected
    assert outcome(statuses["empty"]) == expected


def test_all_devices_past_the_limit_is_an_error_naming_how_many() -> None:
    claim = make_claim("c").request("gpu", CLASS, all_devices=True)
    world = World([GPU_CLASS, gpus("worker", 40), claim.dict()])
    _, statuses = world.filter(pod("c"))
    assert outcome(statuses["worker"]) == error(
        "claim default/c: number of requested devices 40 exceeds the claim limit of 32"
    )


def test_the_least_of_a_first_available_list_counts_towards_the_limit() -> None:
    # 20 + min(20, 13) = 33: no choice can fit.
    claim = (
        make_claim("c")
        .request("a", CLASS, 20)
        .first_available("b", ("b1", CLASS, 20), ("b2", CLASS, 13))
    )
    world = World([GPU_CLASS, gpus("worker", 40), claim.dict()])
    _, statuses = world.filter(pod("c"))
    assert outcome(statuses["worker"]) == error(
        "claim default/c: number of requested devices 33 exceeds the claim limit of 32"
    )


def test_a_first_available_list_falls_through_to_an_alternative_within_the_limit() -> None:
    claim = (
        make_claim("c")
        .request("a", CLASS, 20)
        .first_available("b", ("b1", CLASS, 20), ("b2", CLASS, 10))
    )
    world = World([GPU_CLASS, gpus("worker", 40), claim.dict()])
    state = world.reserve(pod("c"), "worker")
    results = allocation(state)["devices"]["results"]
    assert len(results) == 30
    assert [r["request"] for r in results] == ["a"] * 20 + ["b/b2"] * 10
    assert [r["device"] for r in results] == [f"g{i}" for i in range(30)]
    info = world.table.node_infos[0]
    assert world.plugin.score(state, pod("c"), info)[0] == 7


def test_no_choice_within_the_limit_is_a_misfit_not_an_error() -> None:
    # At the least 10 + 15 = 25 devices, but a2 finds none; with a1's 20, b needs 35 at least.
    claim = (
        make_claim("c")
        .first_available("a", ("a1", CLASS, 20), ("a2", "none", 10))
        .first_available("b", ("b1", CLASS, 20), ("b2", CLASS, 15))
    )
    world = World([GPU_CLASS, NONE_CLASS, gpus("worker", 40), claim.dict()])
    _, statuses = world.filter(pod("c"))
    assert outcome(statuses["worker"]) == unresolvable("cannot allocate all claims")


def test_the_limit_is_per_claim() -> None:
    world = World(
        [
            GPU_CLASS,
            gpus("worker", 40),
            make_claim("c").request("gpu", CLASS, 20).dict(),
            make_claim("d").request("gpu", CLASS, 20).dict(),
        ]
    )
    state = world.reserve(pod("c", "d"), "worker")
    assert len(allocation(state, "c")["devices"]["results"]) == 20
    assert len(allocation(state, "d")["devices"]["results"]) == 20


# ---- Configuration ----------------------------------------------------------------------


def test_class_config_once_per_class_naming_every_request_it_served() -> None:
    claim = (
        make_claim("c")
        .request("a", "big-gpu")
        .request("b", "shared-gpu")
        .first_available("c", ("x", "big-gpu", 1))
        .request("d", "big-gpu")
    )
    world = World([BIG_CLASS, SHARED_CLASS, gpus("worker", 4, "80Gi"), claim.dict()])
    state = world.reserve(pod("c"), "worker")
    assert allocation(state)["devices"]["config"] == [
        {"source": "FromClass", "requests": ["a", "c/x", "d"], **opaque("big-gpu", BIG)},
        {"source": "FromClass", "requests": ["b"], **opaque("shared-gpu", {"x": 1})},
    ]


def claim_config_world(claim: ClaimBuilder) -> World:
    # Only small devices: "g" gets its second alternative, "g/any".
    return World([GPU_CLASS, BIG_CLASS, gpus("worker", 4), claim.dict()])


def test_claim_config_follows_the_requests_each_entry_names() -> None:
    claim = (
        make_claim("c")
        .request("a", CLASS)
        .request("b", CLASS)
        .first_available("g", ("big", "big-gpu", 1), ("any", CLASS, 1))
        .config(DRIVER, "all")
        .config(DRIVER, "both", "a", "b")
        .config(DRIVER, "not-chosen", "g/big")
        .config(DRIVER, "chosen", "g/any")
        .config(DRIVER, "parent", "g")
        .config(DRIVER, "parent-and-chosen", "g", "g/any")
        .config(DRIVER, "a-and-chosen", "a", "g/any")
    )
    state = claim_config_world(claim).reserve(pod("c"), "worker")

    def entry(parameters: str, *requests: str) -> dict[str, Any]:
        found: dict[str, Any] = {"source": "FromClaim", **opaque(DRIVER, parameters)}
        if requests:
            found["requests"] = list(requests)
        return found

    # Copied once per request an entry names (by name, or by the subrequest chosen), as
    # written; never for a subrequest not chosen.
    assert allocation(state)["devices"]["config"] == [
        entry("all"),
        entry("both", "a", "b"),
        entry("both", "a", "b"),
        entry("chosen", "g/any"),
        entry("parent", "g"),
        entry("parent-and-chosen", "g", "g/any"),
        entry("a-and-chosen", "a", "g/any"),
        entry("a-and-chosen", "a", "g/any"),
    ]


def test_no_config_leaves_the_field_out() -> None:
    claim = make_claim("c").request("a", CLASS).config(DRIVER, "elsewhere", "b")
    state = claim_config_world(claim).reserve(pod("c"), "worker")
    assert "config" not in allocation(state)["devices"]


# ---- Score counts allocated claims --------------------------------------------------------


def allocated_claim(*requests: str) -> dict[str, Any]:
    """Allocated on its own devices (elsewhere), by results naming `requests`."""
    claim = make_claim("done").first_available(
        "gpu", ("big", "big-gpu", 1), ("any", CLASS, 1), ("last", CLASS, 1)
    )
    results = [(r, DRIVER, "elsewhere", f"e{i}") for i, r in enumerate(requests)]
    return claim.allocated(None, *results).dict()


def score_world(*objects: dict[str, Any]) -> World:
    return World(
        [
            GPU_CLASS,
            BIG_CLASS,
            gpus("small", 1),
            gpus("large", 1, "80Gi"),
            *objects,
        ],
        nodes=("small", "large"),
    )


def scores(world: World, state: CycleState, p: Pod) -> dict[str, int]:
    """Score on each node, both forms, which must agree."""
    per_node = {i.name: world.plugin.score(state, p, i)[0] for i in world.table.node_infos}
    batch = world.plugin.score_nodes(state, p, world.table, world.table.all_rows()).tolist()
    assert list(per_node.values()) == batch
    return per_node


def test_score_adds_allocated_claims_by_the_subrequest_their_results_name() -> None:
    pending = make_claim("c").first_available("gpu", ("big", "big-gpu", 1), ("any", CLASS, 1))
    # "gpu/any" is index 1 (7); "gpu/gone" is no subrequest the spec lists (nothing); the
    # parent's own name is no subrequest reference (nothing).
    world = score_world(allocated_claim("gpu/any", "gpu/gone", "gpu"), pending.dict())
    p = pod("done", "c")
    state, statuses = world.filter(p)
    assert all(s.is_success for s in statuses.values())
    # The pending claim: 8 where "big" fits, 7 where "any" does.
    assert scores(world, state, p) == {"small": 7 + 7, "large": 7 + 8}


def test_score_counts_each_named_subrequest_of_an_allocated_claim() -> None:
    pending = make_claim("c").request("gpu", CLASS)
    # Results naming two subrequests of one request (index 0 and 2) add 8 + 6.
    world = score_world(allocated_claim("gpu/big", "gpu/last", "gpu/big"), pending.dict())
    p = pod("done", "c")
    state, statuses = world.filter(p)
    assert all(s.is_success for s in statuses.values())
    # The pending claim is decided by counting free devices: nothing chosen, no score of
    # its own, but the allocated claim still counts.
    assert scores(world, state, p) == {"small": 14, "large": 14}


def test_score_is_zero_without_a_claim_to_allocate() -> None:
    world = score_world(allocated_claim("gpu/big"))
    p = pod("done")
    state, _ = world.filter(p)
    # Upstream keeps no allocations for the node then, and scores nothing.
    assert scores(world, state, p) == {"small": 0, "large": 0}
