"""NodeInfo: a node, its pods and what they take, kept in step as pods come and go."""

from __future__ import annotations

from scheduler.framework import NodeInfo
from scheduler.objects.resources import DEFAULT_MEMORY_REQUEST
from scheduler.objects.resources import DEFAULT_MILLI_CPU_REQUEST
from scheduler.testing import make_node
from scheduler.testing import make_pod


def _node() -> NodeInfo:
    return NodeInfo(make_node("n").allocatable(cpu="4", memory="8Gi", pods=10).obj())


def test_a_node_info_without_a_node_has_no_name_and_no_room() -> None:
    info = NodeInfo()
    assert (info.name, info.allocatable, info.allowed_pods) == ("", {}, 0)


def test_allocatable_and_allowed_pods_come_from_the_node() -> None:
    info = _node()
    assert info.name == "n"
    assert info.allowed_pods == 10
    assert info.allocatable["cpu"] == 4000
    info.allocatable["cpu"] = 0  # a copy: the node itself is not changed
    assert info.allocatable["cpu"] == 4000


def test_adding_and_removing_pods_keeps_the_sums() -> None:
    info = _node()
    info.add_pod(make_pod("a").req(cpu="500m").host_port(8080).obj())
    info.add_pod(make_pod("b").obj())
    assert info.requested.get("cpu") == 500
    assert info.non_zero_cpu == 500 + DEFAULT_MILLI_CPU_REQUEST
    assert info.non_zero_memory == 2 * DEFAULT_MEMORY_REQUEST
    assert [p.port for p in info.used_ports] == [8080]
    removed = info.remove_pod("default/a")
    assert removed is not None and removed.name == "a"
    assert info.requested.get("cpu") == 0
    assert info.non_zero_cpu == DEFAULT_MILLI_CPU_REQUEST
    assert info.used_ports == []
    assert info.remove_pod("default/a") is None


def test_adding_a_pod_again_replaces_it() -> None:
    info = _node()
    info.add_pod(make_pod("a").req(cpu="1").obj())
    info.add_pod(make_pod("a").req(cpu="2").obj())
    assert list(info.pods) == ["default/a"]
    assert info.requested["cpu"] == 2000


def test_pods_with_affinity_are_counted() -> None:
    info = _node()
    info.add_pod(make_pod("a").pod_affinity("required", "zone", {"app": "web"}, anti=True).obj())
    assert (info.pods_with_affinity, info.pods_with_required_anti_affinity) == (1, 1)
    info.remove_pod("default/a")
    assert (info.pods_with_affinity, info.pods_with_required_anti_affinity) == (0, 0)


def test_every_change_moves_the_generation() -> None:
    info = _node()
    start = info.generation
    info.add_pod(make_pod("a").obj())
    info.remove_pod("default/a")
    assert info.generation == start + 2


def test_a_clone_changes_apart_from_the_original() -> None:
    info = _node()
    info.add_pod(make_pod("a").req(cpu="1").host_port(80).obj())
    copy = info.clone()
    copy.add_pod(make_pod("b").req(cpu="1").host_port(81).obj())
    assert list(info.pods) == ["default/a"] and info.requested["cpu"] == 1000
    assert [p.port for p in info.used_ports] == [80]
    assert copy.requested["cpu"] == 2000 and copy.generation == info.generation + 1
    assert repr(copy) == "NodeInfo('n', pods=2)"


def _names(info: NodeInfo) -> list[str]:
    return [p.name for p in info.pods.values()]


def test_pods_keep_upstreams_slice_order() -> None:
    # Appended as they come; a removed pod's slot goes to the last pod; a pod added again
    # (upstream's update: remove, then add) goes to the end.
    info = _node()
    for name in "abcde":
        info.add_pod(make_pod(name).obj())
    info.remove_pod("default/b")
    assert _names(info) == ["a", "e", "c", "d"]
    info.remove_pod("default/d")
    assert _names(info) == ["a", "e", "c"]
    info.add_pod(make_pod("a").req(cpu="1").obj())
    assert _names(info) == ["c", "e", "a"]
    info.replace_pod(make_pod("e").obj())
    assert _names(info) == ["c", "a", "e"]
    assert list(info.pods) == ["default/c", "default/a", "default/e"]
    assert "default/a" in info.pods and "default/b" not in info.pods
    assert info.pods["default/e"].name == "e" and info.pods.get("default/b") is None


def test_a_clone_keeps_the_order_and_changes_apart() -> None:
    info = _node()
    for name in "abc":
        info.add_pod(make_pod(name).obj())
    copy = info.clone()
    copy.remove_pod("default/a")
    assert _names(copy) == ["c", "b"]
    assert _names(info) == ["a", "b", "c"]
    assert info.pods.get("default/c") is not None and copy.pods["default/c"].name == "c"
