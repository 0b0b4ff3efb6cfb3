"""The benchmark's workload shapes, as the objects they build."""

from __future__ import annotations

from collections import Counter

from bench.compare_shapes import BASIC
from bench.compare_shapes import NAMESPACE
from bench.compare_shapes import POD_ANTI_AFFINITY
from bench.compare_shapes import SETUP_NAMESPACE
from bench.compare_shapes import SHAPES
from bench.compare_shapes import TOPOLOGY_SPREADING
from bench.compare_shapes import ZONE
from bench.compare_shapes import ZONES


def test_basic_pods_are_plain_and_there_is_no_setup() -> None:
    pod = BASIC.measured_pod(7, "my-scheduler")
    assert pod["metadata"] == {"name": "pod-000007", "namespace": NAMESPACE}
    spec = pod["spec"]
    assert spec["schedulerName"] == "my-scheduler"
    assert "nodeName" not in spec
    (container,) = spec["containers"]
    assert container["resources"]["requests"] == {"cpu": "100m", "memory": "500Mi"}
    assert BASIC.setup_pods(100, "my-scheduler") == []
    assert BASIC.measured_pod_count(100, 5000) == 5000
    node = BASIC.nodes(1)[0]
    assert ZONE not in node["metadata"]["labels"]
    assert node["status"]["allocatable"]["pods"] == "110"


def test_spreading_nodes_share_three_zones_evenly() -> None:
    nodes = TOPOLOGY_SPREADING.nodes(9)
    zones = Counter(n["metadata"]["labels"][ZONE] for n in nodes)
    assert zones == dict.fromkeys(ZONES, 3)


def test_spreading_pods_spread_over_zones_and_setup_pods_are_bound_plain_pods() -> None:
    pod = TOPOLOGY_SPREADING.measured_pod(0, "s")
    assert pod["metadata"]["labels"] == {"color": "blue"}
    (constraint,) = pod["spec"]["topologySpreadConstraints"]
    assert constraint["topologyKey"] == ZONE
    assert constraint["maxSkew"] == 5
    assert constraint["whenUnsatisfiable"] == "DoNotSchedule"
    assert constraint["labelSelector"] == {"matchLabels": {"color": "blue"}}
    setup = TOPOLOGY_SPREADING.setup_pods(6, "s")
    assert len(setup) == 6
    assert {p["metadata"]["namespace"] for p in setup} == {SETUP_NAMESPACE}
    assert all("labels" not in p["metadata"] for p in setup)
    assert len({p["spec"]["nodeName"] for p in setup}) == 6


def test_anti_affinity_pods_repel_green_pods_in_both_namespaces() -> None:
    pod = POD_ANTI_AFFINITY.measured_pod(0, "s")
    assert pod["metadata"]["labels"] == {"color": "green"}
    anti = pod["spec"]["affinity"]["podAntiAffinity"]
    (term,) = anti["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"] == {"matchLabels": {"color": "green"}}
    assert sorted(term["namespaces"]) == sorted([NAMESPACE, SETUP_NAMESPACE])


def test_anti_affinity_setup_fills_a_fifth_of_the_nodes_and_caps_the_measured_pods() -> None:
    setup = POD_ANTI_AFFINITY.setup_pods(100, "s")
    assert len(setup) == 20
    assert len({p["spec"]["nodeName"] for p in setup}) == 20
    assert all(p["metadata"]["labels"] == {"color": "green"} for p in setup)
    assert all("affinity" in p["spec"] for p in setup)
    assert POD_ANTI_AFFINITY.measured_pod_count(100, 50) == 50
    assert POD_ANTI_AFFINITY.measured_pod_count(100, 500) == 80


def test_pods_do_not_share_mutable_parts() -> None:
    first = POD_ANTI_AFFINITY.measured_pod(0, "s")
    first["spec"]["affinity"]["podAntiAffinity"].clear()
    first["metadata"]["labels"]["color"] = "red"
    second = POD_ANTI_AFFINITY.measured_pod(1, "s")
    assert second["spec"]["affinity"]["podAntiAffinity"]
    assert second["metadata"]["labels"] == {"color": "green"}


def test_the_command_line_names_every_shape() -> None:
    assert {s.name for s in SHAPES.values()} == {
        "SchedulingBasic",
        "TopologySpreading",
        "SchedulingPodAntiAffinity",
    }
