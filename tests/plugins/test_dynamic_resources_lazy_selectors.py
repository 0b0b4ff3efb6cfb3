"""A CEL selector that fails on some devices (here: an attribute only some devices have) is an
Error only if the search reaches such a device while no claim holds it, as upstream evaluates
selectors device by device during its search. Every case runs Filter in both forms (`World`)."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.dynamic_resources.state import STATE_KEY
from plugins.dynamic_resources.state import StateData
from scheduler.framework import Code
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

GPU_CLASS = make_device_class(CLASS, f'device.driver == "{DRIVER}"')
HEALTHY = (f'device.attributes["{DRIVER}"].healthy',)
NO_SUCH_KEY = (Code.ERROR, "claim default/c: selector #0: CEL runtime error: no such key: healthy")
OK = (Code.SUCCESS, "")


def healthy(name: str) -> dict[str, Any]:
    return device(name, healthy=True)


def bare(name: str) -> dict[str, Any]:
    """A device without the attribute the selector reads: the selector fails on it."""
    return device(name, model="a100")


def gpus(*devices: dict[str, Any], node: str = "worker") -> dict[str, Any]:
    return make_slice(f"{node}-gpus", DRIVER, list(devices), node=node)


def claim_for_healthy(count: int = 1, **kw: Any) -> dict[str, Any]:
    return make_claim("c").request("req-1", CLASS, count, selectors=HEALTHY, **kw).dict()


def holding(device_name: str) -> dict[str, Any]:
    """Another claim, allocated the device already."""
    return (
        make_claim("other")
        .request("req-1", CLASS)
        .allocated("worker", ("req-1", DRIVER, "worker", device_name))
        .dict()
    )


def pod_using_c() -> Pod:
    return Pod.from_dict(with_claims(make_pod("p").uid("pod-uid").dict(), claims={"c": "c"}))


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        pytest.param(
            [gpus(healthy("gpu-0"), bare("gpu-1")), claim_for_healthy()],
            OK,
            id="enough-found-before-the-failing-device",
        ),
        pytest.param(
            [gpus(healthy("gpu-0"), bare("gpu-1")), claim_for_healthy(2)],
            NO_SUCH_KEY,
            id="failing-device-reached-for-the-second",
        ),
        pytest.param(
            [gpus(bare("gpu-0"), healthy("gpu-1")), claim_for_healthy()],
            NO_SUCH_KEY,
            id="failing-device-first",
        ),
        pytest.param(
            [gpus(bare("gpu-0"), healthy("gpu-1")), claim_for_healthy(), holding("gpu-0")],
            OK,
            id="failing-device-held-by-another-claim-is-never-evaluated",
        ),
        pytest.param(
            [gpus(healthy("gpu-0"), healthy("gpu-1"), bare("gpu-2")), claim_for_healthy(3)],
            NO_SUCH_KEY,
            id="too-few-devices-still-reaches-the-failing-one",
        ),
        pytest.param(
            [gpus(healthy("gpu-0"), bare("gpu-1")), claim_for_healthy(all_devices=True)],
            NO_SUCH_KEY,
            id="all-devices-evaluates-every-device",
        ),
        pytest.param(
            [
                gpus(healthy("gpu-0"), healthy("gpu-1"), bare("gpu-2")),
                make_claim("c")
                .request("req-1", CLASS, 2, selectors=HEALTHY)
                .request("req-2", CLASS)
                .dict(),
            ],
            OK,
            id="searched-claim-takes-the-failing-device-for-a-request-without-the-selector",
        ),
        pytest.param(
            [
                gpus(healthy("gpu-0"), bare("gpu-1"), healthy("gpu-2")),
                make_claim("c")
                .request("req-1", CLASS, selectors=HEALTHY)
                .request("req-2", CLASS, selectors=HEALTHY)
                .dict(),
            ],
            NO_SUCH_KEY,
            id="searched-claim-reaches-the-failing-device-between-two",
        ),
    ],
)
def test_selector_failures_count_where_the_search_reaches_them(
    objects: list[dict[str, Any]], expected: tuple[Code, str]
) -> None:
    world = World([GPU_CLASS, *objects])
    _, statuses = world.filter(pod_using_c())
    assert outcome(statuses["worker"]) == expected


def test_a_node_whose_failing_device_comes_first_errs_while_others_pass() -> None:
    world = World(
        [
            GPU_CLASS,
            gpus(bare("gpu-0"), healthy("gpu-1"), node="worker"),
            gpus(healthy("gpu-0"), bare("gpu-1"), node="spare"),
            gpus(healthy("gpu-0"), node="plain"),
            claim_for_healthy(),
        ],
        nodes=("worker", "spare", "plain"),
    )
    _, statuses = world.filter(pod_using_c())
    assert {name: outcome(s) for name, s in statuses.items()} == {
        "worker": NO_SUCH_KEY,
        "spare": OK,
        "plain": OK,
    }


def test_reserve_allocates_the_devices_found_before_the_failing_one() -> None:
    # A counted request is searched again at Reserve: that search must not fail either.
    world = World(
        [GPU_CLASS, gpus(healthy("gpu-0"), healthy("gpu-1"), bare("gpu-2")), claim_for_healthy(2)]
    )
    state = world.reserve(pod_using_c(), "worker")
    results = state.read(STATE_KEY, StateData).allocations["uid-claim-default-c"]["devices"]
    assert [r["device"] for r in results["results"]] == ["gpu-0", "gpu-1"]


def test_explain_names_the_failure_and_how_many_devices_it_is_on() -> None:
    world = World(
        [GPU_CLASS, gpus(bare("gpu-0"), healthy("gpu-1"), bare("gpu-2")), claim_for_healthy()]
    )
    pod = pod_using_c()
    state, _ = world.filter(pod)
    [line] = world.plugin.filter_details(state, pod, world.table.node_infos[0])
    assert line.startswith(
        "claim default/c, request req-1 (1 device(s)): claim default/c: selector #0: CEL runtime "
        "error: no such key: healthy (on 2 of 3 devices that may match; the search stops at the "
        "first of them no claim holds): 1 matching, 1 free on its own: worker/gpu-1 free"
    ), line
