"""Pod signatures (`sign_pod`, opportunistic batching): pods a plugin would answer alike sign
alike, and pods it may answer differently do not, or are not signed at all."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from plugins import balanced_allocation
from plugins import capacity_scheduling
from plugins import coscheduling
from plugins import data_locality
from plugins import default_binder
from plugins import default_preemption
from plugins import dynamic_resources
from plugins import gpu_aware
from plugins import image_locality
from plugins import inter_pod_affinity
from plugins import ip_allocation
from plugins import load_aware
from plugins import node_affinity
from plugins import node_declared_features
from plugins import node_name
from plugins import node_ports
from plugins import node_resources_fit
from plugins import node_unschedulable
from plugins import node_volume_limits
from plugins import pod_topology_spread
from plugins import priority_sort
from plugins import scheduling_gates
from plugins import taint_toleration
from plugins import volume_binding
from plugins import volume_restrictions
from plugins import volume_zone
from plugins.helpers.signatures import IMAGES
from plugins.helpers.signatures import NAMESPACE
from plugins.helpers.signatures import RESOURCES
from plugins.helpers.signatures import TOLERATIONS
from plugins.helpers.signatures import VOLUMES
from plugins.helpers.volumes import pod_claims
from plugins.inter_pod_affinity import InterPodAffinityArgs
from plugins.pod_topology_spread.args import DefaultConstraint
from plugins.pod_topology_spread.args import PodTopologySpreadArgs
from scheduler.framework import CycleState
from scheduler.framework import PluginArgs
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import SignFragments
from scheduler.framework import SignPlugin
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.builders import PodBuilder
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import with_claims

UPSTREAM = {
    spec.name: spec
    for spec in (
        node_resources_fit.SPEC,
        balanced_allocation.SPEC,
        node_volume_limits.SPEC,
        volume_binding.SPEC,
        volume_zone.SPEC,
        volume_restrictions.SPEC,
        taint_toleration.SPEC,
        node_unschedulable.SPEC,
        node_affinity.SPEC,
        node_name.SPEC,
        node_ports.SPEC,
        image_locality.SPEC,
        inter_pod_affinity.SPEC,
        pod_topology_spread.SPEC,
        dynamic_resources.SPEC,
        node_declared_features.SPEC,
    )
}
UNSIGNED = (
    coscheduling.SPEC,
    capacity_scheduling.SPEC,
    load_aware.SPEC,
    gpu_aware.SPEC,
    data_locality.SPEC,
    ip_allocation.SPEC,
    priority_sort.SPEC,
    scheduling_gates.SPEC,
    default_preemption.SPEC,
    default_binder.SPEC,
)
RESOURCE_PLUGINS = ("NodeResourcesFit", "NodeResourcesBalancedAllocation")
VOLUME_PLUGINS = ("NodeVolumeLimits", "VolumeBinding", "VolumeZone", "VolumeRestrictions")
TOLERATION_PLUGINS = ("TaintToleration", "NodeUnschedulable")
# With nothing to default to, PodTopologySpread signs pods without constraints of their own.
NO_DEFAULT_SPREAD = PodTopologySpreadArgs(defaulting_type="List")
GPU = "example.com/gpu"
IMPLICIT_GPU = "deviceclass.resource.kubernetes.io/gpu"
GPU_CLASS = make_device_class("gpu", extended_resource_name=GPU)


def build(
    spec: PluginSpec, args: PluginArgs | None = None, handle: FakeHandle | None = None
) -> SignPlugin:
    args = args if args is not None else spec.default_args()
    plugin = spec.create(args, handle or FakeHandle())
    assert isinstance(plugin, SignPlugin)
    return plugin


def sign(name: str, pod: Pod, **kwargs: Any) -> SignFragments | None:
    return build(UPSTREAM[name], **kwargs).sign_pod(pod)


def all_plugins(classes: list[dict[str, Any]] | None = None) -> list[SignPlugin]:
    handle = FakeHandle(listers={"deviceclasses": classes or []})
    return [
        build(spec, NO_DEFAULT_SPREAD if name == "PodTopologySpread" else None, handle)
        for name, spec in UPSTREAM.items()
    ]


def volume(name: str, **source: Any) -> dict[str, Any]:
    return {"name": name, **source}


HOST_PATH = volume("logs", hostPath={"path": "/var/log", "type": "Directory"})
CLAIM = volume("data", persistentVolumeClaim={"claimName": "shared", "readOnly": True})


def per_pod_volumes(pod_name: str) -> list[dict[str, Any]]:
    """Volumes every pod has its own of, which decide nothing about placement."""
    return [
        volume("config", configMap={"name": f"{pod_name}-config"}),
        volume("token", secret={"secretName": f"{pod_name}-token"}),
    ]


def web(name: str, namespace: str = "default") -> PodBuilder:
    """A replica of a template using a bit of everything plugins sign."""
    return (
        make_pod(name, namespace)
        .label("app", "web")
        .req(cpu="500m", memory="1Gi")
        .image("nginx")
        .container("registry.k8s.io/sidecar:1.0", cpu="100m")
        .toleration("dedicated", "web", "NoSchedule")
        .toleration("node.kubernetes.io/unschedulable", operator="Exists")
        .node_selector(disk="ssd")
        .node_affinity_in("topology.kubernetes.io/zone", "a", "b")
        .host_port(8080)
        .spec(volumes=[HOST_PATH, CLAIM, *per_pod_volumes(name)])
    )


def all_differ(values: Sequence[object]) -> bool:
    return all(a != b for i, a in enumerate(values) for b in values[i + 1 :])


def merged(plugins: list[SignPlugin], pod: Pod) -> dict[str, object] | None:
    """The runtime's signature: every plugin's fragments in one map, None if one refuses."""
    signature: dict[str, object] = {}
    for plugin in plugins:
        fragments = plugin.sign_pod(pod)
        if fragments is None:
            return None
        signature.update(fragments)
    return signature


# ---- which plugins sign ---------------------------------------------------------------------


@pytest.mark.parametrize("spec", UPSTREAM.values(), ids=lambda spec: spec.name)
def test_every_upstream_filter_and_score_plugin_signs(spec: PluginSpec) -> None:
    plugin = spec.create(spec.default_args(), FakeHandle())
    assert isinstance(plugin, SignPlugin)


@pytest.mark.parametrize("spec", UNSIGNED, ids=lambda spec: spec.name)
def test_out_of_tree_and_other_plugins_do_not_sign(spec: PluginSpec) -> None:
    plugin = spec.create(spec.default_args(), FakeHandle())
    assert not isinstance(plugin, SignPlugin)


# ---- replicas -------------------------------------------------------------------------------


def test_replicas_of_one_template_sign_alike_with_every_plugin() -> None:
    plugins = all_plugins()
    first, second = web("web-1").obj(), web("web-2").obj()
    for plugin in plugins:
        signed = plugin.sign_pod(first)
        assert signed is not None, plugin.name
        assert signed == plugin.sign_pod(second), plugin.name
    signature = merged(plugins, first)
    assert signature is not None
    assert signature == merged(plugins, second)
    # Values are hashable, so a whole signature can key a map.
    assert hash(tuple(sorted(signature.items())))


def test_plugins_giving_one_fragment_give_the_same_value() -> None:
    pod = web("web-1").obj()
    seen: dict[str, tuple[str, object]] = {}
    shared = set()
    for plugin in all_plugins():
        fragments = plugin.sign_pod(pod)
        assert fragments is not None
        for name, value in fragments.items():
            if name in seen:
                shared.add(name)
                assert value == seen[name][1], f"{plugin.name} and {seen[name][0]} on {name}"
            seen[name] = (plugin.name, value)
    assert {RESOURCES, VOLUMES, NAMESPACE, TOLERATIONS} <= shared


def test_a_pod_differing_in_what_one_plugin_reads_signs_otherwise() -> None:
    plugins = all_plugins()
    base = merged(plugins, web("web-1").obj())
    variants = {
        "requests": web("v").req(cpu="1"),
        "toleration": web("v").toleration("gpu", "yes", "NoSchedule"),
        "node selector": web("v").node_selector(disk="hdd"),
        "node affinity": web("v").node_affinity_in("topology.kubernetes.io/zone", "c"),
        "node name": web("v").node("n1"),
        "host port": web("v").host_port(9090),
        "image": web("v").image("nginx:1.27"),
        "labels": web("v").label("tier", "front"),
        "namespace": web("v", namespace="other"),
        "volume": web("v").spec(volumes=[HOST_PATH]),
        "features": web("v").spec(hostNetwork=True, hostUsers=False),
    }
    for what, builder in variants.items():
        signature = merged(plugins, builder.obj())
        assert signature is not None, what
        assert signature != base, what


# ---- resources: NodeResourcesFit and NodeResourcesBalancedAllocation ------------------------


@pytest.mark.parametrize("name", RESOURCE_PLUGINS)
def test_resources_sign_the_effective_requests(name: str) -> None:
    # An init container's request counts as the effective (largest) one, as in Filter.
    split = make_pod("a").req(cpu="1").init_container(cpu="2").obj()
    whole = make_pod("b").req(cpu="2").obj()
    assert sign(name, split) == sign(name, whole)
    assert sign(name, whole) != sign(name, make_pod("c").req(cpu="3").obj())
    with_overhead = make_pod("d").req(cpu="2").overhead(cpu="250m").obj()
    assert sign(name, with_overhead) != sign(name, whole)


@pytest.mark.parametrize("name", RESOURCE_PLUGINS)
def test_resources_sign_the_non_zero_defaults_scoring_uses(name: str) -> None:
    # The second container asks for no memory: scoring counts 200Mi for it.
    two = make_pod("a").req(cpu="1").container("x", cpu="0").obj()
    one = make_pod("b").req(cpu="1").obj()
    assert two.requests == one.requests
    assert two.non_zero_memory != one.non_zero_memory
    assert sign(name, two) != sign(name, one)


@pytest.mark.parametrize("name", RESOURCE_PLUGINS)
def test_resources_sign_the_containers_beside_pod_level_requests(name: str) -> None:
    # NodeResourcesFit scores by the containers' sum even where the pod sets its own.
    pod_level = {"requests": {"cpu": "2", "memory": "1Gi"}}
    a = make_pod("a").req(cpu="1").spec(resources=pod_level).obj()
    b = make_pod("b").req(cpu="500m").spec(resources=pod_level).obj()
    assert a.requests == b.requests
    assert sign(name, a) != sign(name, b)
    assert sign(name, a) == sign(name, make_pod("c").req(cpu="1").spec(resources=pod_level).obj())


@pytest.mark.parametrize("name", [*RESOURCE_PLUGINS, "DynamicResources"])
@pytest.mark.parametrize("resource", [GPU, IMPLICIT_GPU])
def test_a_resource_a_device_class_provides_makes_the_pod_unsignable(
    name: str, resource: str
) -> None:
    pod = make_pod("p").req(cpu="1", **{resource: 1}).obj()
    with_class = FakeHandle(listers={"deviceclasses": [GPU_CLASS]})
    assert sign(name, pod, handle=with_class) is None
    assert sign(name, pod, handle=FakeHandle()) is not None


@pytest.mark.parametrize("name", RESOURCE_PLUGINS)
def test_an_unprovided_or_zero_extended_resource_is_signed(name: str) -> None:
    handle = FakeHandle(listers={"deviceclasses": [GPU_CLASS]})
    fpga = make_pod("a").req(cpu="1", **{"example.com/fpga": 1}).obj()
    zero_gpu = make_pod("b").req(cpu="1", **{GPU: 0}).obj()
    plain = make_pod("c").req(cpu="1").obj()
    assert sign(name, fpga, handle=handle) not in (None, sign(name, plain, handle=handle))
    assert sign(name, zero_gpu, handle=handle) == sign(name, plain, handle=handle)


# ---- volumes --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", VOLUME_PLUGINS)
def test_volumes_sign_alike_in_any_order_and_under_any_name(name: str) -> None:
    a = make_pod("a").spec(volumes=[HOST_PATH, CLAIM]).obj()
    renamed = [volume("other", persistentVolumeClaim=CLAIM["persistentVolumeClaim"]), HOST_PATH]
    b = make_pod("b").spec(volumes=renamed).obj()
    assert sign(name, a) == sign(name, b)


@pytest.mark.parametrize("name", VOLUME_PLUGINS)
def test_config_map_and_secret_volumes_are_left_out(name: str) -> None:
    bare = make_pod("a").spec(volumes=[CLAIM]).obj()
    mounted = make_pod("b").spec(volumes=[*per_pod_volumes("b"), CLAIM]).obj()
    assert sign(name, bare) == sign(name, mounted)


@pytest.mark.parametrize("name", VOLUME_PLUGINS)
def test_other_volume_sources_differ(name: str) -> None:
    logs = make_pod("a").spec(volumes=[HOST_PATH]).obj()
    tmp = make_pod("b").spec(volumes=[volume("logs", hostPath={"path": "/tmp"})]).obj()
    none = make_pod("c").obj()
    assert all_differ([sign(name, pod) for pod in (logs, tmp, none)])


@pytest.mark.parametrize("name", VOLUME_PLUGINS)
def test_a_claim_is_signed_with_the_namespace_it_is_looked_up_in(name: str) -> None:
    here = make_pod("a", "team-a").spec(volumes=[CLAIM]).obj()
    there = make_pod("b", "team-b").spec(volumes=[CLAIM]).obj()
    assert sign(name, here) != sign(name, there)
    assert sign(name, here) == sign(name, make_pod("c", "team-a").spec(volumes=[CLAIM]).obj())
    # Without a claim the namespace reads nothing.
    assert sign(name, make_pod("d", "team-a").obj()) == sign(name, make_pod("e", "team-b").obj())


@pytest.mark.parametrize("name", VOLUME_PLUGINS)
def test_a_generic_ephemeral_volume_makes_the_pod_unsignable(name: str) -> None:
    template = {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}
    pod = make_pod("a").spec(volumes=[volume("scratch", ephemeral=template)]).obj()
    other = make_pod("b").spec(volumes=[volume("scratch", ephemeral=template)]).obj()
    # Each pod's claim is its own, named after it.
    assert pod_claims(pod) != pod_claims(other)
    assert sign(name, pod) is None


# ---- tolerations ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", TOLERATION_PLUGINS)
def test_tolerations_sign_alike_in_any_order(name: str) -> None:
    a = (
        make_pod("a")
        .toleration("dedicated", "web", "NoSchedule")
        .toleration("dedicated", "web", "NoExecute")
        .toleration("gpu", operator="Exists")
        .obj()
    )
    b = (
        make_pod("b")
        .toleration("gpu", operator="Exists")
        .toleration("dedicated", "web", "NoExecute")
        .toleration("dedicated", "web", "NoSchedule")
        .obj()
    )
    assert sign(name, a) == sign(name, b)


@pytest.mark.parametrize("name", TOLERATION_PLUGINS)
def test_different_tolerations_differ(name: str) -> None:
    web_pod = make_pod("a").toleration("dedicated", "web", "NoSchedule").obj()
    db_pod = make_pod("b").toleration("dedicated", "db", "NoSchedule").obj()
    no_execute = make_pod("c").toleration("dedicated", "web", "NoExecute").obj()
    assert all_differ([sign(name, pod) for pod in (web_pod, db_pod, no_execute)])


# ---- node affinity, node name, ports --------------------------------------------------------


def test_node_affinity_signs_the_selector_and_the_affinity() -> None:
    def pod(selector: str = "ssd", zone: str = "a") -> PodBuilder:
        return (
            make_pod("p").node_selector(disk=selector, arch="arm64").node_affinity_in("zone", zone)
        )

    reordered = make_pod("q").node_selector(arch="arm64", disk="ssd").node_affinity_in("zone", "a")
    assert sign("NodeAffinity", pod().obj()) == sign("NodeAffinity", reordered.obj())
    preferred = pod().preferred_node_affinity(
        5, {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}
    )
    variants = [pod(), pod(selector="hdd"), pod(zone="b"), preferred]
    assert all_differ([sign("NodeAffinity", b.obj()) for b in variants])


def test_node_name_signs_the_requested_node() -> None:
    assert sign("NodeName", make_pod("a").obj()) == sign("NodeName", make_pod("b").obj())
    assert sign("NodeName", make_pod("a").node("n1").obj()) != sign(
        "NodeName", make_pod("b").node("n2").obj()
    )


def test_host_ports_sign_alike_in_any_order() -> None:
    a = make_pod("a").host_port(80).host_port(443).obj()
    b = make_pod("b").host_port(443).host_port(80).host_port(80).obj()
    assert sign("NodePorts", a) == sign("NodePorts", b)
    udp = make_pod("c").host_port(80, "UDP").host_port(443).obj()
    bound = make_pod("d").host_port(80, host_ip="10.0.0.1").host_port(443).obj()
    assert all_differ([sign("NodePorts", pod) for pod in (a, udp, bound)])


# ---- images ---------------------------------------------------------------------------------


def test_images_sign_normalized_in_any_container_order() -> None:
    a = make_pod("a").image("nginx").container("redis:7").obj()
    b = make_pod("b").image("redis:7").container("nginx:latest").obj()
    assert sign("ImageLocality", a) == sign("ImageLocality", b)
    assert sign("ImageLocality", a) != sign("ImageLocality", make_pod("c").image("nginx").obj())


def test_images_sign_how_often_each_is_used_as_the_score_counts_it() -> None:
    twice_nginx = make_pod("a").image("nginx").container("nginx").container("redis").obj()
    twice_redis = make_pod("b").image("nginx").container("redis").container("redis").obj()
    nodes = [make_node("n1").image("nginx:latest", 500 * 1024 * 1024).obj(), make_node("n2").obj()]
    table = build_table(nodes)
    plugin = image_locality.SPEC.create(None, FakeHandle(table))
    assert isinstance(plugin, image_locality.ImageLocality)
    rows = np.arange(table.size)
    scores = [
        plugin.score_nodes(CycleState(), pod, table, rows)[0] for pod in (twice_nginx, twice_redis)
    ]
    assert scores[0] != scores[1]
    assert plugin.sign_pod(twice_nginx) != plugin.sign_pod(twice_redis)
    signed = plugin.sign_pod(twice_nginx)
    assert signed is not None and IMAGES in signed


# ---- inter-pod affinity ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "builder",
    [
        make_pod("p").pod_affinity("required", "zone", {"app": "db"}),
        make_pod("p").pod_affinity("preferred", "zone", {"app": "db"}, weight=10),
        make_pod("p").pod_affinity("required", "zone", {"app": "web"}, anti=True),
    ],
    ids=["affinity", "preferred affinity", "anti-affinity"],
)
@pytest.mark.parametrize("ignore", [False, True])
def test_a_pod_with_affinity_terms_is_unsignable(builder: PodBuilder, ignore: bool) -> None:
    args = InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=ignore)
    assert sign("InterPodAffinity", builder.obj(), args=args) is None


@pytest.mark.parametrize("ignore", [False, True])
def test_inter_pod_affinity_signs_labels_and_namespace(ignore: bool) -> None:
    args = InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=ignore)

    def signed(builder: PodBuilder) -> SignFragments | None:
        return sign("InterPodAffinity", builder.obj(), args=args)

    assert signed(make_pod("a").labels(app="web", tier="front")) == signed(
        make_pod("b").labels(tier="front", app="web")
    )
    variants = [
        make_pod("a").label("app", "web"),
        make_pod("b").label("app", "db"),
        make_pod("c", "other").label("app", "web"),
    ]
    assert all_differ([signed(b) for b in variants])


def test_existing_anti_affinity_tells_pods_apart_even_when_preferred_terms_are_ignored() -> None:
    """Why labels and namespace are signed whatever ignorePreferredTermsOfExistingPods says
    (upstream then signs nothing): an existing pod's required anti-affinity still rejects the
    pods it selects in Filter, and only them."""
    guard = (
        make_pod("guard")
        .node("n1")
        .pod_affinity("required", "kubernetes.io/hostname", {"app": "web"}, anti=True)
        .obj()
    )
    table = build_table([make_node("n1").obj()], [guard])
    args = InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True)
    plugin = inter_pod_affinity.SPEC.create(args, FakeHandle(table))
    assert isinstance(plugin, inter_pod_affinity.InterPodAffinity)

    def fits(pod: Pod) -> bool:
        state = CycleState()
        _, status = plugin.pre_filter(state, pod, table)
        return status.is_skip or plugin.filter(state, pod, table.node_infos[0]).is_success

    web_pod = make_pod("web").label("app", "web").obj()
    db_pod = make_pod("db").label("app", "db").obj()
    web_elsewhere = make_pod("web", "other").label("app", "web").obj()
    assert (fits(web_pod), fits(db_pod), fits(web_elsewhere)) == (False, True, True)
    signatures = [plugin.sign_pod(pod) for pod in (web_pod, db_pod, web_elsewhere)]
    assert signatures[0] != signatures[1]
    assert signatures[0] != signatures[2]


# ---- pod topology spread --------------------------------------------------------------------


def test_with_system_default_constraints_no_pod_is_signed() -> None:
    assert sign("PodTopologySpread", make_pod("p").obj()) is None


def test_with_listed_default_constraints_no_pod_is_signed() -> None:
    constraint = DefaultConstraint(
        max_skew=1, topology_key="topology.kubernetes.io/zone", when_unsatisfiable="ScheduleAnyway"
    )
    args = PodTopologySpreadArgs(defaulting_type="List", default_constraints=(constraint,))
    assert sign("PodTopologySpread", make_pod("p").obj(), args=args) is None


def test_without_defaults_only_pods_with_constraints_are_unsignable() -> None:
    assert sign("PodTopologySpread", make_pod("p").obj(), args=NO_DEFAULT_SPREAD) == {}
    constraint = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    spread = make_pod("q").spec(topologySpreadConstraints=[constraint]).obj()
    assert sign("PodTopologySpread", spread, args=NO_DEFAULT_SPREAD) is None


# ---- dynamic resources ----------------------------------------------------------------------


def test_a_pod_with_resource_claims_is_unsignable() -> None:
    pod = Pod.from_dict(with_claims(make_pod("p").dict(), claims={"gpu": "shared-gpu"}))
    assert sign("DynamicResources", pod) is None
    assert sign("DynamicResources", make_pod("q").obj()) == {}


# ---- node declared features -----------------------------------------------------------------


def test_declared_features_sign_the_features_the_pod_needs() -> None:
    def features(builder: PodBuilder) -> Mapping[str, object] | None:
        return sign("NodeDeclaredFeatures", builder.obj())

    user_ns = make_pod("a").spec(hostNetwork=True, hostUsers=False)
    assert features(user_ns) == features(make_pod("b").spec(hostNetwork=True, hostUsers=False))
    assert features(user_ns) != features(make_pod("c").spec(hostNetwork=True))
    # What needs no feature reads alike.
    assert features(make_pod("c").spec(hostNetwork=True)) == features(make_pod("d"))
