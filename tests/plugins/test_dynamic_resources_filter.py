"""DynamicResources PreFilter and Filter, case by case, with upstream's texts."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import StateData
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import with_claims
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from tests.plugins.dra_world import CLASS
from tests.plugins.dra_world import DRIVER
from tests.plugins.dra_world import World
from tests.plugins.dra_world import outcome
from tests.plugins.dra_world import unresolvable

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
ONE_GPU = make_slice("worker-gpus", DRIVER, [device("gpu-0", model="a100")], node="worker")


def pod_using(*claims: str) -> Pod:
    raw = with_claims(make_pod("p").uid("pod-uid").dict(), claims={c: c for c in claims})
    return Pod.from_dict(raw)


def pending(name: str = "c", count: int = 1, **kw: Any) -> dict[str, Any]:
    return make_claim(name).request("req-1", CLASS, count, **kw).dict()


def test_pod_without_claims_is_skipped() -> None:
    world = World([GPU_CLASS, ONE_GPU])
    _, status = world.pre_filter(make_pod("plain").obj())
    assert status.code is Code.SKIP


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        pytest.param(
            [GPU_CLASS, pending()], unresolvable("cannot allocate all claims"), id="no-resources"
        ),
        pytest.param([GPU_CLASS, ONE_GPU, pending()], (Code.SUCCESS, ""), id="with-resources"),
        pytest.param(
            [
                GPU_CLASS,
                ONE_GPU,
                pending(),
                make_claim("other")
                .request("req-1", CLASS)
                .allocated("worker", ("req-1", DRIVER, "worker", "gpu-0"))
                .dict(),
            ],
            unresolvable("cannot allocate all claims"),
            id="exhausted-resources",
        ),
        pytest.param(
            [
                GPU_CLASS,
                ONE_GPU,
                pending(admin_access=True),
                make_claim("other")
                .request("req-1", CLASS)
                .allocated("worker", ("req-1", DRIVER, "worker", "gpu-0"))
                .dict(),
            ],
            (Code.SUCCESS, ""),
            id="admin-access-ignores-allocated",
        ),
        pytest.param(
            [
                GPU_CLASS,
                ONE_GPU,
                pending(),
                make_claim("other")
                .request("req-1", CLASS, admin_access=True)
                .allocated("worker", ("req-1", DRIVER, "worker", "gpu-0"))
                .admin_access_results()
                .dict(),
            ],
            (Code.SUCCESS, ""),
            id="allocated-with-admin-access-does-not-take",
        ),
        pytest.param(
            [GPU_CLASS, ONE_GPU, pending(count=2)],
            unresolvable("cannot allocate all claims"),
            id="too-few-devices",
        ),
        pytest.param(
            [
                GPU_CLASS,
                ONE_GPU,
                pending(selectors=('device.attributes["gpu.example.com"].model == "h100"',)),
            ],
            unresolvable("cannot allocate all claims"),
            id="claim-selector-rejects",
        ),
        pytest.param(
            [
                GPU_CLASS,
                ONE_GPU,
                pending(selectors=('device.attributes["gpu.example.com"].healthy',)),
            ],
            (
                Code.ERROR,
                "claim default/c: selector #0: CEL runtime error: no such key: healthy",
            ),
            id="claim-CEL-runtime-error",
        ),
        pytest.param(
            [
                make_device_class(CLASS, 'device.attributes["gpu.example.com"].healthy'),
                ONE_GPU,
                pending(),
            ],
            (Code.ERROR, "class gpu: selector #0: CEL runtime error: no such key: healthy"),
            id="class-CEL-runtime-error",
        ),
        pytest.param(
            [GPU_CLASS, ONE_GPU, pending(all_devices=True)], (Code.SUCCESS, ""), id="all-devices"
        ),
        pytest.param(
            [
                GPU_CLASS,
                make_slice("shared", DRIVER, [device("gpu-0")], all_nodes=True, pool="fabric"),
                pending(),
            ],
            (Code.SUCCESS, ""),
            id="all-nodes-pool",
        ),
        pytest.param(
            [
                GPU_CLASS,
                make_slice(
                    "racked",
                    DRIVER,
                    [device("gpu-0")],
                    node_selector={
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "rack", "operator": "In", "values": ["r2"]}
                                ]
                            }
                        ]
                    },
                    pool="rack-2",
                ),
                pending(),
            ],
            unresolvable("cannot allocate all claims"),
            id="node-selector-pool-elsewhere",
        ),
    ],
)
def test_filter(objects: list[dict[str, Any]], expected: tuple[Code, str]) -> None:
    world = World(objects)
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == expected


def test_claim_compile_error_stops_at_prefilter() -> None:
    world = World([GPU_CLASS, ONE_GPU, pending(selectors=("device.driver ==",))])
    _, status = world.pre_filter(pod_using("c"))
    assert status.code is Code.ERROR
    assert status.message().startswith("claim default/c: selector #0: CEL compile error: ")


def test_missing_class() -> None:
    world = World([ONE_GPU, pending()])
    state, status = world.pre_filter(pod_using("c"))
    assert outcome(status) == unresolvable("request req-1: device class gpu does not exist")
    _, post = world.plugin.post_filter(state, pod_using("c"), None)  # type: ignore[arg-type]
    assert outcome(post) == (Code.UNSCHEDULABLE, "no new claims to deallocate")


def test_post_filter_without_its_pre_filter_state_answers_upstreams_error() -> None:
    # An earlier PreFilter plugin rejected the pod as unresolvable, so this one never ran.
    world = World([GPU_CLASS, ONE_GPU])
    _, post = world.plugin.post_filter(CycleState(), pod_using("c"), None)  # type: ignore[arg-type]
    assert outcome(post) == (Code.ERROR, "not found")


def test_filter_without_its_pre_filter_state_fails_every_node_alike_in_both_forms() -> None:
    world = World([GPU_CLASS, ONE_GPU])
    pod = pod_using("c")
    per_node = filter_each_node(world.plugin, CycleState(), pod, world.table)
    batch = filter_batch_as_statuses(world.plugin, CycleState(), pod, world.table)
    assert per_node and all(s.code == Code.ERROR for s in per_node)
    assert [outcome(s) for s in batch] == [outcome(s) for s in per_node]


def test_request_without_exactly_or_first_available() -> None:
    claim = make_claim("c").dict()
    claim["spec"]["devices"]["requests"] = [{"name": "req-1"}]
    world = World([GPU_CLASS, claim])
    _, status = world.pre_filter(pod_using("c"))
    assert outcome(status) == unresolvable(
        "resource claim default/c, request req-1: unknown request type"
    )


def test_node_selector_pool_matching_node_labels() -> None:
    racked = make_slice(
        "racked",
        DRIVER,
        [device("gpu-0")],
        node_selector={
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r2"]}]}
            ]
        },
        pool="rack-2",
    )
    world = World([GPU_CLASS, racked, pending()], nodes=("a", "b"), labels={"b": {"rack": "r2"}})
    state, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["a"]) == unresolvable("cannot allocate all claims")
    assert statuses["b"].is_success
    assert world.plugin.reserve(state, pod_using("c"), "b").is_success
    data = state.read(STATE_KEY, StateData)
    allocation = data.allocations["uid-claim-default-c"]
    # A device from a selected pool is usable wherever the pool's selector says.
    assert allocation["nodeSelector"] == racked["spec"]["nodeSelector"]


def test_all_devices_fails_when_one_is_taken() -> None:
    slice_ = make_slice("worker-gpus", DRIVER, [device("gpu-0"), device("gpu-1")], node="worker")
    taken = (
        make_claim("other")
        .request("r", CLASS)
        .allocated("worker", ("r", DRIVER, "worker", "gpu-1"))
    )
    world = World([GPU_CLASS, slice_, pending(all_devices=True), taken.dict()])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == unresolvable("cannot allocate all claims")


def test_all_devices_of_an_incomplete_pool_is_an_error() -> None:
    part = make_slice("part-1", DRIVER, [device("gpu-0")], node="worker", slice_count=2)
    world = World([GPU_CLASS, part, pending(all_devices=True)])
    _, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == (
        Code.ERROR,
        "claim default/c, request req-1: asks for all devices, but resource pool "
        "gpu.example.com/worker is currently being updated",
    )


def test_only_the_newest_pool_generation_counts() -> None:
    old = make_slice("old", DRIVER, [device("gpu-old")], node="worker", generation=1)
    new = make_slice("new", DRIVER, [device("gpu-new")], node="worker", generation=2)
    world = World([GPU_CLASS, old, new, pending()])
    state = world.reserve(pod_using("c"), "worker")
    data = state.read(STATE_KEY, StateData)
    results = data.allocations["uid-claim-default-c"]["devices"]["results"]
    assert [r["device"] for r in results] == ["gpu-new"]


def test_allocated_claim_on_the_wrong_node_is_deallocated_by_post_filter() -> None:
    claim = (
        make_claim("c")
        .request("req-1", CLASS)
        .allocated("other", ("req-1", DRIVER, "other", "gpu-0"))
    )
    world = World([GPU_CLASS, claim.dict()])
    background: list[str] = []
    world.handle.start_background = lambda name, work, **_: background.append(name)  # type: ignore[method-assign]
    state, statuses = world.filter(pod_using("c"))
    assert outcome(statuses["worker"]) == unresolvable("resourceclaim not available on the node")
    _, post = world.plugin.post_filter(state, pod_using("c"), None)  # type: ignore[arg-type]
    assert outcome(post) == (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
    assert background == ["deallocate:default/c"]


def test_allocated_claim_held_by_another_pod_is_not_deallocated() -> None:
    holder = make_pod("holder").uid("holder-uid").obj()
    claim = (
        make_claim("c")
        .request("req-1", CLASS)
        .allocated("other", ("req-1", DRIVER, "other", "gpu-0"))
        .reserved_for(holder)
    )
    world = World([GPU_CLASS, claim.dict()])
    state, _ = world.filter(pod_using("c"))
    _, post = world.plugin.post_filter(state, pod_using("c"), None)  # type: ignore[arg-type]
    assert outcome(post) == (Code.UNSCHEDULABLE, "still not schedulable")


def test_shared_allocated_claim_is_usable_on_its_node() -> None:
    holder = make_pod("holder").uid("holder-uid").obj()
    claim = (
        make_claim("c")
        .request("req-1", CLASS)
        .allocated("worker", ("req-1", DRIVER, "worker", "gpu-0"))
        .reserved_for(holder)
    )
    world = World([GPU_CLASS, ONE_GPU, claim.dict()], nodes=("worker", "other"))
    _, statuses = world.filter(pod_using("c"))
    assert statuses["worker"].is_success
    assert outcome(statuses["other"]) == unresolvable("resourceclaim not available on the node")


def test_claim_reserved_by_the_most_consumers_the_server_allows_is_not_refused() -> None:
    # v1.36 sets no limit on sharing: the server refuses the 257th reservation at PreBind.
    holders = [make_pod(f"h{i}").uid(f"h{i}").obj() for i in range(256)]
    claim = (
        make_claim("c")
        .request("req-1", CLASS)
        .allocated("worker", ("req-1", DRIVER, "worker", "gpu-0"))
        .reserved_for(*holders)
    )
    world = World([GPU_CLASS, ONE_GPU, claim.dict()])
    _, status = world.pre_filter(pod_using("c"))
    assert status.is_success, status
    _, statuses = world.filter(pod_using("c"))
    assert statuses["worker"].is_success


def test_claim_with_a_pending_allocation_waits() -> None:
    world = World([GPU_CLASS, ONE_GPU, pending()])
    world.reserve(pod_using("c"), "worker")
    other = Pod.from_dict(with_claims(make_pod("q").uid("q-uid").dict(), claims={"c": "c"}))
    _, status = world.pre_filter(other)
    assert outcome(status) == unresolvable(
        "resource claim default/c is in the process of being allocated"
    )


class TickingClock:
    """A clock whose time moves on by one second each time it is read."""

    def __init__(self) -> None:
        self._now = 0.0
        self._inner = FakeClock()

    def now(self) -> float:
        self._now += 1.0
        return self._now

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_filter_timeout() -> None:
    # Twenty devices on each of two roots and 21 wanted on one root: no answer, and a long
    # search to find that out.
    devices = [device(f"gpu-{i}", root=f"pci-{i % 2}") for i in range(40)]
    slice_ = make_slice("worker-gpus", DRIVER, devices, node="worker")
    claim = make_claim("c").request("req-1", CLASS, 21).match_attribute(f"{DRIVER}/root")
    world = World([GPU_CLASS, slice_, claim.dict()], filter_timeout=5, clock=TickingClock())
    _, statuses = world.filter(pod_using("c"))
    # An Error, which fails the attempt: a timeout may pass, so the pod goes to backoff.
    assert outcome(statuses["worker"]) == (
        Code.ERROR,
        "node worker: timed out trying to allocate devices",
    )
