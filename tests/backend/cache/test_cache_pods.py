"""Pods in the cache: assume, forget, informer confirmation, updates, terminal pods."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduler.backend.cache import CacheError
from scheduler.backend.cache import SchedulerCache
from scheduler.objects.pod import Pod
from scheduler.testing.builders import PodBuilder
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod

GI = 1024**3
MI = 1024**2


def row_state(cache: SchedulerCache, node: str) -> dict[str, Any]:
    """Every usage value of a node's table row; resources at zero are left out."""
    table = cache.table
    row = table.row_of(node)
    assert row is not None, f"{node} has no row"
    requested = {
        name: int(table.requested_of(name)[row])
        for name in table.resource_names
        if table.requested_of(name)[row]
    }
    return {
        "requested": requested,
        "non_zero": tuple(int(v) for v in table.non_zero_requested[row]),
        "pods": int(table.pod_count[row]),
        "ports": int(table.port_count[row]),
        "affinity": int(table.affinity_pod_count[row]),
        "anti_affinity": int(table.anti_affinity_pod_count[row]),
    }


EMPTY_ROW = {
    "requested": {},
    "non_zero": (0, 0),
    "pods": 0,
    "ports": 0,
    "affinity": 0,
    "anti_affinity": 0,
}


def cache_with_nodes(*names: str) -> SchedulerCache:
    cache = SchedulerCache()
    for name in names:
        cache.add_node(make_node(name).capacity(cpu="8", memory="32Gi", pods=110).obj())
    return cache


def bound(builder: PodBuilder, node: str) -> Pod:
    return builder.node(node).obj()


ASSUME_CASES: list[tuple[str, Callable[[], PodBuilder], dict[str, Any]]] = [
    (
        "cpu-and-memory",
        lambda: make_pod("p").req(cpu="250m", memory="1Gi"),
        {**EMPTY_ROW, "requested": {"cpu": 250, "memory": GI}, "non_zero": (250, GI), "pods": 1},
    ),
    (
        "best-effort-counts-defaults-for-scoring-only",
        lambda: make_pod("p"),
        {**EMPTY_ROW, "non_zero": (100, 200 * MI), "pods": 1},
    ),
    (
        "extended-resource-gets-a-column",
        lambda: make_pod("p").req(cpu="1", **{"example.com/gpu": 2}),
        {
            **EMPTY_ROW,
            "requested": {"cpu": 1000, "example.com/gpu": 2},
            "non_zero": (1000, 200 * MI),
            "pods": 1,
        },
    ),
    (
        "host-ports",
        lambda: make_pod("p").req(cpu="100m").host_port(80).host_port(443),
        {
            **EMPTY_ROW,
            "requested": {"cpu": 100},
            "non_zero": (100, 200 * MI),
            "pods": 1,
            "ports": 2,
        },
    ),
    (
        "required-anti-affinity",
        lambda: make_pod("p").pod_affinity("required", "zone", {"app": "x"}, anti=True),
        {**EMPTY_ROW, "non_zero": (100, 200 * MI), "pods": 1, "affinity": 1, "anti_affinity": 1},
    ),
    (
        "preferred-affinity",
        lambda: make_pod("p").pod_affinity("preferred", "zone", {"app": "x"}, weight=5),
        {**EMPTY_ROW, "non_zero": (100, 200 * MI), "pods": 1, "affinity": 1},
    ),
]


@pytest.mark.parametrize(
    ("builder", "expected"), [c[1:] for c in ASSUME_CASES], ids=[c[0] for c in ASSUME_CASES]
)
def test_assume_shows_in_the_table_at_once(
    builder: Callable[[], PodBuilder], expected: dict[str, Any]
) -> None:
    cache = cache_with_nodes("n1", "n2")
    pod = builder().obj()

    assumed = cache.assume_pod(pod, "n1")

    assert assumed.node_name == "n1"
    assert pod.node_name == ""
    assert cache.is_assumed(pod.key)
    assert cache.get_pod(pod.key) is assumed
    assert row_state(cache, "n1") == expected
    assert row_state(cache, "n2") == EMPTY_ROW


@pytest.mark.parametrize(
    ("builder", "_expected"), [c[1:] for c in ASSUME_CASES], ids=[c[0] for c in ASSUME_CASES]
)
def test_forget_restores_the_row_exactly(
    builder: Callable[[], PodBuilder], _expected: dict[str, Any]
) -> None:
    cache = cache_with_nodes("n1")
    cache.add_pod(bound(make_pod("existing").req(cpu="1", memory="2Gi").host_port(8080), "n1"))
    before = row_state(cache, "n1")
    info_before = cache.node_info("n1")
    assert info_before is not None
    ports_before = list(info_before.used_ports)

    assumed = cache.assume_pod(builder().obj(), "n1")
    cache.forget_pod(assumed)

    assert row_state(cache, "n1") == before
    assert info_before.used_ports == ports_before
    assert cache.get_pod(assumed.key) is None
    assert not cache.is_assumed(assumed.key)
    assert cache.sizes() == {"nodes": 1, "pods": 1, "assumed_pods": 0}


def test_forget_accepts_the_pod_as_it_was_before_assume() -> None:
    cache = cache_with_nodes("n1")
    pod = make_pod("p").req(cpu="1").obj()
    cache.assume_pod(pod, "n1")

    cache.forget_pod(pod)

    assert row_state(cache, "n1") == EMPTY_ROW


CONFIRM_CASES = [
    # (id, assumed on, bound on, via update_pod)
    ("add-on-same-node", "n1", "n1", False),
    ("add-on-other-node", "n1", "n2", False),
    ("update-on-same-node", "n1", "n1", True),
    ("update-on-other-node", "n1", "n2", True),
]


@pytest.mark.parametrize(
    ("assumed_on", "bound_on", "via_update"),
    [c[1:] for c in CONFIRM_CASES],
    ids=[c[0] for c in CONFIRM_CASES],
)
def test_informer_confirms_an_assumed_pod_once_where_it_is_bound(
    assumed_on: str, bound_on: str, via_update: bool
) -> None:
    cache = cache_with_nodes("n1", "n2")
    builder = make_pod("p").req(cpu="500m", memory="1Gi")
    pod = builder.obj()
    cache.assume_pod(pod, assumed_on)
    cache.finish_binding(pod)

    informed = bound(builder, bound_on)
    if via_update:
        cache.update_pod(pod, informed)
    else:
        cache.add_pod(informed)

    one_pod = {**EMPTY_ROW, "requested": {"cpu": 500, "memory": GI}}
    one_pod |= {"non_zero": (500, GI), "pods": 1}
    for node in ("n1", "n2"):
        assert row_state(cache, node) == (one_pod if node == bound_on else EMPTY_ROW)
    assert not cache.is_assumed(pod.key)
    assert cache.get_pod(pod.key) is informed
    assert cache.sizes() == {"nodes": 2, "pods": 1, "assumed_pods": 0}
    with pytest.raises(CacheError, match="wasn't assumed"):
        cache.forget_pod(informed)


def test_confirmation_on_a_node_not_yet_seen_waits_for_the_node() -> None:
    cache = cache_with_nodes("n1")
    builder = make_pod("p").req(cpu="300m")
    cache.assume_pod(builder.obj(), "n1")

    cache.add_pod(bound(builder, "n9"))

    assert row_state(cache, "n1") == EMPTY_ROW
    assert cache.node_info("n9") is None
    assert cache.table.row_of("n9") is None
    assert cache.sizes() == {"nodes": 2, "pods": 1, "assumed_pods": 0}
    cache.add_node(make_node("n9").obj())
    assert row_state(cache, "n9")["requested"] == {"cpu": 300}


def test_assumed_pod_stays_assumed_through_updates_of_the_unbound_object() -> None:
    cache = cache_with_nodes("n1")
    builder = make_pod("p").req(cpu="1")
    pod = builder.obj()
    cache.assume_pod(pod, "n1")

    cache.update_pod(pod, builder.label("seen", "again").obj())

    assert cache.is_assumed(pod.key)
    assert row_state(cache, "n1")["requested"] == {"cpu": 1000}


@pytest.mark.parametrize(
    "prepare",
    [
        pytest.param(lambda c, p: c.assume_pod(p, "n1"), id="already-assumed"),
        pytest.param(lambda c, p: c.add_pod(bound(make_pod("p"), "n2")), id="already-added"),
    ],
)
def test_assume_refuses_a_cached_pod(prepare: Callable[[SchedulerCache, Pod], object]) -> None:
    cache = cache_with_nodes("n1", "n2")
    pod = make_pod("p").req(cpu="1").obj()
    prepare(cache, pod)
    before = {n: row_state(cache, n) for n in ("n1", "n2")}

    with pytest.raises(CacheError, match="is in the cache, so can't be assumed"):
        cache.assume_pod(pod, "n1")

    assert {n: row_state(cache, n) for n in ("n1", "n2")} == before


@pytest.mark.parametrize(
    ("prepare", "forget", "message"),
    [
        pytest.param(
            lambda c: None, lambda: make_pod("p").obj(), "wasn't assumed", id="never-seen"
        ),
        pytest.param(
            lambda c: c.add_pod(bound(make_pod("p"), "n1")),
            lambda: bound(make_pod("p"), "n1"),
            "wasn't assumed",
            id="confirmed",
        ),
        pytest.param(
            lambda c: c.assume_pod(make_pod("p").obj(), "n1"),
            lambda: bound(make_pod("p"), "n2"),
            "was assumed on n1 but assigned to n2",
            id="other-node",
        ),
    ],
)
def test_forget_refuses(
    prepare: Callable[[SchedulerCache], object], forget: Callable[[], Pod], message: str
) -> None:
    cache = cache_with_nodes("n1", "n2")
    prepare(cache)
    sizes = cache.sizes()

    with pytest.raises(CacheError, match=message):
        cache.forget_pod(forget())

    assert cache.sizes() == sizes


def test_finish_binding_is_recorded_and_ignored_for_unknown_pods() -> None:
    cache = cache_with_nodes("n1")
    pod = make_pod("p").obj()
    cache.assume_pod(pod, "n1")

    cache.finish_binding(make_pod("other").obj())
    assert cache.dump()["assumed_pods"] == {"default/p": {"node": "n1", "binding_finished": False}}
    cache.finish_binding(pod)
    assert cache.dump()["assumed_pods"] == {"default/p": {"node": "n1", "binding_finished": True}}
    assert cache.is_assumed(pod.key)


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_terminal_pods_take_no_capacity(phase: str) -> None:
    cache = cache_with_nodes("n1")
    running = make_pod("run").req(cpu="1").node("n1").phase("Running")
    cache.add_pod(make_pod("done").req(cpu="2").node("n1").phase(phase).obj())
    assert cache.get_pod("default/done") is None
    cache.add_pod(running.obj())
    assert row_state(cache, "n1")["requested"] == {"cpu": 1000}

    cache.update_pod(running.obj(), running.phase(phase).obj())

    assert row_state(cache, "n1") == EMPTY_ROW
    assert cache.sizes() == {"nodes": 1, "pods": 0, "assumed_pods": 0}
    cache.remove_pod(running.obj())  # the later delete finds nothing to do
    assert cache.sizes()["pods"] == 0


def test_an_assumed_pod_reported_bound_and_terminal_is_gone() -> None:
    cache = cache_with_nodes("n1")
    builder = make_pod("p").req(cpu="1")
    cache.assume_pod(builder.obj(), "n1")

    cache.add_pod(builder.node("n1").phase("Failed").obj())

    assert not cache.is_assumed("default/p")
    assert row_state(cache, "n1") == EMPTY_ROW


UPDATE_CASES = [
    # (id, new request, new node, expected n1 cpu, expected n2 cpu)
    ("requests-grow", "2", "n1", 2000, 0),
    ("requests-shrink", "100m", "n1", 100, 0),
    ("moves-node", "1", "n2", 0, 1000),
    ("moves-and-changes", "3", "n2", 0, 3000),
]


@pytest.mark.parametrize(
    ("cpu", "node", "n1_cpu", "n2_cpu"),
    [c[1:] for c in UPDATE_CASES],
    ids=[c[0] for c in UPDATE_CASES],
)
def test_update_pod_is_reflected(cpu: str, node: str, n1_cpu: int, n2_cpu: int) -> None:
    cache = cache_with_nodes("n1", "n2")
    old = bound(make_pod("p").req(cpu="1"), "n1")
    cache.add_pod(old)

    cache.update_pod(old, bound(make_pod("p").req(cpu=cpu), node))

    assert row_state(cache, "n1")["requested"].get("cpu", 0) == n1_cpu
    assert row_state(cache, "n2")["requested"].get("cpu", 0) == n2_cpu
    assert row_state(cache, "n1")["pods"] + row_state(cache, "n2")["pods"] == 1


def test_update_of_a_pod_missed_by_add_adds_it() -> None:
    cache = cache_with_nodes("n1")
    pod = bound(make_pod("p").req(cpu="1"), "n1")

    cache.update_pod(pod, pod)

    assert row_state(cache, "n1")["requested"] == {"cpu": 1000}


def test_repeated_add_counts_once() -> None:
    cache = cache_with_nodes("n1")
    pod = bound(make_pod("p").req(cpu="1").host_port(80), "n1")

    cache.add_pod(pod)
    cache.add_pod(pod)

    assert row_state(cache, "n1")["requested"] == {"cpu": 1000}
    assert row_state(cache, "n1")["ports"] == 1
    assert row_state(cache, "n1")["pods"] == 1


def test_add_pod_ignores_unbound_pods() -> None:
    cache = cache_with_nodes("n1")

    cache.add_pod(make_pod("p").req(cpu="1").obj())

    assert cache.sizes()["pods"] == 0
    assert row_state(cache, "n1") == EMPTY_ROW


REMOVE_CASES = [
    # (id, assume first, deleted object is bound, stays cached)
    ("confirmed-pod", False, True, False),
    ("assumed-pod-deleted-after-binding", True, True, False),
    ("assumed-pod-deleted-unbound-left-to-its-binding-cycle", True, False, True),
]


@pytest.mark.parametrize(
    ("assume", "deleted_bound", "stays"),
    [c[1:] for c in REMOVE_CASES],
    ids=[c[0] for c in REMOVE_CASES],
)
def test_remove_pod(assume: bool, deleted_bound: bool, stays: bool) -> None:
    cache = cache_with_nodes("n1")
    builder = make_pod("p").req(cpu="1")
    if assume:
        cache.assume_pod(builder.obj(), "n1")
    else:
        cache.add_pod(bound(builder, "n1"))

    cache.remove_pod(bound(builder, "n1") if deleted_bound else builder.obj())

    assert (cache.get_pod("default/p") is not None) is stays
    assert row_state(cache, "n1")["requested"] == ({"cpu": 1000} if stays else {})


def test_remove_of_an_unknown_pod_is_a_no_op() -> None:
    cache = cache_with_nodes("n1")

    cache.remove_pod(bound(make_pod("ghost"), "n1"))

    assert cache.sizes() == {"nodes": 1, "pods": 0, "assumed_pods": 0}


def test_update_to_unbound_frees_the_node() -> None:
    cache = cache_with_nodes("n1")
    pod = bound(make_pod("p").req(cpu="1"), "n1")
    cache.add_pod(pod)

    cache.update_pod(pod, make_pod("p").req(cpu="1").obj())

    assert cache.get_pod(pod.key) is None
    assert row_state(cache, "n1") == EMPTY_ROW


def test_a_confirmation_taking_the_same_room_leaves_the_row_as_it_is() -> None:
    cache = cache_with_nodes("n1")
    builder = make_pod("p").req(cpu="500m", memory="1Gi").labels(app="web")
    pod = builder.obj()
    cache.assume_pod(pod, "n1")
    row = cache.table.row_of("n1")
    assert row is not None
    stamp, clock = int(cache.table.pod_stamp[row]), cache.table.pod_clock
    informed = bound(builder, "n1")
    cache.add_pod(informed)
    # Nothing the row holds changed, so nothing that reads the row has to look at it again.
    assert (int(cache.table.pod_stamp[row]), cache.table.pod_clock) == (stamp, clock)
    assert cache.get_pod(pod.key) is informed
    info = cache.node_info("n1")
    assert info is not None and info.pods[pod.key] is informed
    assert not cache.is_assumed(pod.key)


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b.req(cpu="700m", memory="1Gi"),
        lambda b: b.labels(app="db"),
    ],
    ids=["requests", "labels"],
)
def test_a_confirmation_that_differs_rewrites_the_row(
    change: Callable[[PodBuilder], PodBuilder],
) -> None:
    cache = cache_with_nodes("n1")
    builder = make_pod("p").req(cpu="500m", memory="1Gi").labels(app="web")
    pod = builder.obj()
    cache.assume_pod(pod, "n1")
    clock = cache.table.pod_clock
    informed = bound(change(builder), "n1")
    cache.add_pod(informed)
    assert cache.table.pod_clock > clock
    cpu = informed.requests["cpu"]
    assert row_state(cache, "n1")["requested"]["cpu"] == cpu


def pod_order(cache: SchedulerCache, node: str) -> list[str]:
    info = cache.node_info(node)
    assert info is not None
    return [p.name for p in info.pods.values()]


def test_a_removed_pods_place_on_its_node_goes_to_the_last_pod() -> None:
    # Upstream's NodeInfo keeps its pods in a slice and fills a gap with the last pod; the
    # order reaches preemption, which lists potential victims in it.
    cache = cache_with_nodes("n1")
    for name in "abcd":
        cache.add_pod(bound(make_pod(name).req(cpu="1"), "n1"))
    cache.remove_pod(bound(make_pod("a"), "n1"))
    assert pod_order(cache, "n1") == ["d", "b", "c"]
    cache.remove_pod(bound(make_pod("c"), "n1"))
    assert pod_order(cache, "n1") == ["d", "b"]


@pytest.mark.parametrize(
    "change",
    [lambda b: b, lambda b: b.labels(app="db"), lambda b: b.req(cpu="2")],
    ids=["same-room", "labels", "requests"],
)
def test_an_updated_pod_moves_to_the_end_of_its_node(
    change: Callable[[PodBuilder], PodBuilder],
) -> None:
    # Upstream's cache updates a pod by removing it and adding it again, whatever changed.
    cache = cache_with_nodes("n1")
    builders = {name: make_pod(name).req(cpu="1") for name in "abcd"}
    for builder in builders.values():
        cache.add_pod(bound(builder, "n1"))
    old = cache.get_pod("default/b")
    assert old is not None
    cache.update_pod(old, bound(change(builders["b"]), "n1"))
    assert pod_order(cache, "n1") == ["a", "d", "c", "b"]


def test_confirming_an_assumed_pod_moves_it_to_the_end_of_its_node() -> None:
    cache = cache_with_nodes("n1")
    builders = {name: make_pod(name).req(cpu="1") for name in "abc"}
    for builder in builders.values():
        cache.assume_pod(builder.obj(), "n1")
    cache.add_pod(bound(builders["a"], "n1"))
    assert pod_order(cache, "n1") == ["c", "b", "a"]
