"""Nodes in the cache: rows of the node table, nodes arriving late or leaving with pods on them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from scheduler.backend.cache import SchedulerCache
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.node import Node
from scheduler.objects.taints import Taint
from scheduler.testing.builders import NodeBuilder
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod


def requested_cpu(cache: SchedulerCache, node: str) -> int:
    row = cache.table.row_of(node)
    assert row is not None, f"{node} has no row"
    return int(cache.table.requested_of("cpu")[row])


def label_of(cache: SchedulerCache, node: str, key: str) -> str | None:
    ids, values = cache.table.label_ids(key)
    row = cache.table.row_of(node)
    assert row is not None
    return None if ids[row] < 0 else values[ids[row]]


def assert_rows_consistent(cache: SchedulerCache) -> None:
    table = cache.table
    assert len(table.names) == len(table.node_infos) == table.size
    for row, name in enumerate(table.names):
        assert table.row_of(name) == row
        info = table.node_infos[row]
        assert info is cache.node_info(name)
        assert info.node is not None
        assert info.node.name == name


def test_pods_arriving_before_their_node_are_counted_when_it_arrives() -> None:
    cache = SchedulerCache()
    cache.add_pod(make_pod("a").req(cpu="1").node("n1").obj())
    cache.add_pod(make_pod("b").req(cpu="500m").node("n1").obj())

    assert cache.node_info("n1") is None
    assert cache.table.size == 0
    assert cache.node_names() == []
    assert cache.sizes() == {"nodes": 1, "pods": 2, "assumed_pods": 0}

    cache.add_node(make_node("n1").obj())

    assert requested_cpu(cache, "n1") == 1500
    info = cache.node_info("n1")
    assert info is not None
    assert sorted(info.pods) == ["default/a", "default/b"]
    assert cache.sizes() == {"nodes": 1, "pods": 2, "assumed_pods": 0}


def test_node_removed_with_pods_keeps_them_until_re_added() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n1").obj())
    cache.add_node(make_node("n2").obj())
    cache.add_pod(make_pod("a").req(cpu="2").node("n1").obj())
    cache.assume_pod(make_pod("b").req(cpu="1").obj(), "n1")

    cache.remove_node(make_node("n1").obj())

    assert cache.node_info("n1") is None
    assert cache.table.row_of("n1") is None
    assert cache.node_names() == ["n2"]
    assert cache.get_pod("default/a") is not None
    assert cache.is_assumed("default/b")
    assert cache.sizes() == {"nodes": 2, "pods": 2, "assumed_pods": 1}
    assert cache.dump()["nodes"]["n1"]["exists"] is False
    assert_rows_consistent(cache)

    cache.add_node(make_node("n1").obj())

    assert requested_cpu(cache, "n1") == 3000
    assert int(cache.table.pod_count[cache.table.row_of("n1") or 0]) == 2
    assert_rows_consistent(cache)


def test_node_info_without_node_goes_away_with_its_last_pod() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n1").obj())
    pod = make_pod("a").node("n1").obj()
    cache.add_pod(pod)
    cache.remove_node(make_node("n1").obj())

    cache.remove_pod(pod)

    assert cache.sizes() == {"nodes": 0, "pods": 0, "assumed_pods": 0}
    assert cache.dump()["nodes"] == {}


def test_removing_an_empty_or_unknown_node() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n1").obj())

    cache.remove_node(make_node("n1").obj())
    cache.remove_node(make_node("n1").obj())
    cache.remove_node(make_node("never").obj())

    assert cache.sizes()["nodes"] == 0
    assert cache.table.size == 0


UpdateCase = tuple[str, Callable[[NodeBuilder], NodeBuilder], Callable[[SchedulerCache], bool]]
UPDATE_CASES: list[UpdateCase] = [
    (
        "label-value-changes",
        lambda b: b.zone("b"),
        lambda c: label_of(c, "n1", ZONE_LABEL) == "b",
    ),
    (
        "label-added",
        lambda b: b.label("disk", "ssd"),
        lambda c: label_of(c, "n1", "disk") == "ssd",
    ),
    (
        "label-removed",
        lambda _: make_node("n1").capacity(cpu="4", memory="8Gi", pods=110),
        lambda c: label_of(c, "n1", ZONE_LABEL) is None,
    ),
    (
        "taint-added",
        lambda b: b.taint("dedicated", "gpu"),
        lambda c: (
            c.table.taint_sets[c.table.taint_set_id[0]]
            == (Taint("dedicated", "gpu", "NoSchedule"),)
        ),
    ),
    (
        "allocatable-changes",
        lambda b: b.capacity(cpu="16", memory="64Gi", pods=50),
        lambda c: (
            int(c.table.allocatable_of("cpu")[0]) == 16000 and int(c.table.allowed_pods[0]) == 50
        ),
    ),
    (
        "cordoned",
        lambda b: b.unschedulable(),
        lambda c: bool(c.table.unschedulable[0]),
    ),
]


def base_node() -> NodeBuilder:
    return make_node("n1").zone("a").capacity(cpu="4", memory="8Gi", pods=110)


@pytest.mark.parametrize(
    ("change", "check"), [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES]
)
def test_update_node_rewrites_the_row(
    change: Callable[[NodeBuilder], NodeBuilder], check: Callable[[SchedulerCache], bool]
) -> None:
    cache = SchedulerCache()
    old = base_node().obj()
    cache.add_node(old)
    cache.add_pod(make_pod("p").req(cpu="1").node("n1").obj())
    cache.table.label_ids(ZONE_LABEL)  # a column built before the change must follow it
    version = cache.table.label_version

    cache.update_node(old, change(base_node()).obj())

    assert check(cache)
    assert cache.table.label_version > version
    assert requested_cpu(cache, "n1") == 1000  # usage survives a row rewrite


def test_update_node_with_nothing_the_table_holds_leaves_the_row_alone() -> None:
    cache = SchedulerCache()
    old = base_node().taint("k", "v").obj()
    cache.add_node(old)
    raw = base_node().taint("k", "v").dict()
    raw["metadata"]["resourceVersion"] = "42"
    raw["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    new = Node.from_dict(raw)
    version = cache.table.label_version
    taint_set = int(cache.table.taint_set_id[0])
    info = cache.node_info("n1")
    assert info is not None
    generation = info.generation

    cache.update_node(old, new)

    assert cache.table.label_version == version
    assert int(cache.table.taint_set_id[0]) == taint_set
    assert info.node is new  # plugins reading conditions see the new object
    assert info.generation > generation


def test_update_node_for_an_unknown_node_adds_it_and_add_twice_updates() -> None:
    cache = SchedulerCache()
    cache.update_node(None, make_node("n1").zone("a").obj())
    cache.add_node(make_node("n1").zone("b").obj())

    assert cache.node_names() == ["n1"]
    assert label_of(cache, "n1", ZONE_LABEL) == "b"


def test_images_follow_node_add_update_and_remove() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n1").image("nginx:1", 100).image("redis:7", 200).obj())
    cache.add_node(make_node("n2").image("nginx:1", 100).obj())
    assert cache.table.image_nodes == {"nginx:1": {"n1", "n2"}, "redis:7": {"n1"}}

    cache.update_node(None, make_node("n1").image("nginx:1", 100).image("etcd:3", 50).obj())
    assert cache.table.image_nodes == {"nginx:1": {"n1", "n2"}, "etcd:3": {"n1"}}

    cache.remove_node(make_node("n2").obj())
    assert cache.table.image_nodes == {"nginx:1": {"n1"}, "etcd:3": {"n1"}}


def test_one_size_per_image_name_kept_as_upstream_keeps_it() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n1").image("app:v1", 100).obj())
    # A second holder reporting another size does not change the size the cluster keeps.
    cache.add_node(make_node("n2").image("app:v1", 300).obj())
    assert cache.table.image_sizes == {"app:v1": 100}
    # The first holder leaving keeps the size too: the name is still held.
    cache.remove_node(make_node("n1").obj())
    assert cache.table.image_sizes == {"app:v1": 100}
    # Any update of the sole holder records its images again, with the size it reports now.
    cache.update_node(None, make_node("n2").image("app:v1", 300).label("x", "y").obj())
    assert cache.table.image_sizes == {"app:v1": 300}
    cache.remove_node(make_node("n2").obj())
    assert cache.table.image_sizes == {} and cache.table.image_nodes == {}


def test_swap_remove_keeps_rows_names_and_infos_in_step() -> None:
    cache = SchedulerCache()
    for index in range(5):
        cache.add_node(make_node(f"n{index}").zone(f"z{index % 2}").taint(f"t{index}").obj())
        cache.add_pod(make_pod(f"p{index}").req(cpu=f"{index + 1}").node(f"n{index}").obj())
    zone_ids_built = cache.table.label_ids(ZONE_LABEL)
    assert len(zone_ids_built[0]) == 5

    cache.remove_node(make_node("n1").obj())
    cache.remove_node(make_node("n4").obj())  # the last row: nothing moves
    cache.add_node(make_node("n5").zone("z9").obj())

    assert_rows_consistent(cache)
    assert sorted(cache.node_names()) == ["n0", "n2", "n3", "n5"]
    for index in (0, 2, 3):
        name = f"n{index}"
        assert requested_cpu(cache, name) == (index + 1) * 1000
        assert label_of(cache, name, ZONE_LABEL) == f"z{index % 2}"
        assert label_of(cache, name, HOSTNAME_LABEL) == name
        row = cache.table.row_of(name)
        assert row is not None
        tainted = cache.table.taint_sets[cache.table.taint_set_id[row]]
        assert tainted == (Taint(f"t{index}", "", "NoSchedule"),)
    assert requested_cpu(cache, "n5") == 0
    assert label_of(cache, "n5", ZONE_LABEL) == "z9"


def test_dump_lists_nodes_pods_and_requests() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n1").capacity(cpu="4", memory="1Gi", pods=10).obj())
    cache.add_pod(make_pod("a").req(cpu="1").node("n1").obj())
    cache.assume_pod(make_pod("b").req(memory="1Ki").obj(), "n1")

    dump = cache.dump()

    assert dump["nodes"]["n1"]["exists"] is True
    assert dump["nodes"]["n1"]["pods"] == ["default/a", "default/b"]
    assert dump["nodes"]["n1"]["requested"] == {"cpu": 1000, "memory": 1024}
    assert dump["nodes"]["n1"]["allocatable"] == {"cpu": 4000, "memory": 1024**3, "pods": 10}
    assert dump["assumed_pods"] == {"default/b": {"node": "n1", "binding_finished": False}}


def test_table_grows_past_its_initial_capacity_with_columns_built_early() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n0").zone("z0").obj())
    cache.table.label_ids(ZONE_LABEL)  # built while the table is small
    for index in range(1, 200):
        cache.add_node(make_node(f"n{index}").zone(f"z{index % 3}").obj())
        cache.add_pod(make_pod(f"p{index}").req(cpu=f"{index}m").node(f"n{index}").obj())
    for index in range(0, 200, 7):
        cache.remove_node(make_node(f"n{index}").obj())

    assert_rows_consistent(cache)
    assert cache.table.size == 200 - len(range(0, 200, 7))
    for name in cache.node_names():
        index = int(name[1:])
        assert label_of(cache, name, ZONE_LABEL) == f"z{index % 3}"
        assert requested_cpu(cache, name) == index
